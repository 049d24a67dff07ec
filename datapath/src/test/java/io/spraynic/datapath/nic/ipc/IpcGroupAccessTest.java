package io.spraynic.datapath.nic.ipc;

import io.spraynic.datapath.nic.NicConnection;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * I10.1 and I10.10 with real users: a NIC started for a group ({@code --ipc-group}) makes its directory, announcement
 * and socket that group's (0750, 0640, 0660), refuses a directory others could write or another user or group owns,
 * and serves a process of another uid in the group, while it refuses one outside the group by its peer credentials
 * even when file modes let it connect. The other users are child processes run through {@code setpriv} as uid 65534
 * (root runs the tests); each talks to {@code nic.sock} with python3 and says what it met.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class IpcGroupAccessTest
{
    private static final int OTHER_UID = 65534;
    /** A HELLO (I5.8) on the socket, of this IPC version; prints ANSWER (the NIC answered), CLOSED, or DENIED (no permission). */
    private static final String CLIENT = String.join("\n",
        "import socket, struct, sys",
        "s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)",
        "try:",
        "    s.connect(sys.argv[1])",
        "except PermissionError:",
        "    print('DENIED'); sys.exit(0)",
        "s.settimeout(10)",
        "try:",
        "    s.send(struct.pack('<ii', 13, " + IpcFileDescriptor.VERSION + ") + struct.pack('<qqq', 0, 1, 0))",
        "    data, ancillary, flags, address = s.recvmsg(1024, socket.CMSG_SPACE(64))",
        "    print('ANSWER' if len(data) > 0 else 'CLOSED')",
        "except (ConnectionResetError, BrokenPipeError):",
        "    print('CLOSED')",
        "");

    /**
     * ADD_CLIENT (I5.1) on the socket; prints "CLIENT id token" from the OK, then keeps alive on the command ring for 3
     * s (another process writes in its name meanwhile), or prints what else it met.
     */
    private static final String ADDING_CLIENT = String.join("\n",
        "import os, socket, struct, sys, time",
        "s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)",
        "s.connect(sys.argv[1])",
        "s.settimeout(10)",
        "s.send(struct.pack('<ii', " + IpcMessages.ADD_CLIENT + ", " + IpcFileDescriptor.VERSION +
            ") + struct.pack('<qqqq', 0, 1, 0, os.getpid()))",
        "data, ancillary, flags, address = s.recvmsg(1024, socket.CMSG_SPACE(64))",
        "kind, version = struct.unpack_from('<ii', data, 0)",
        "if kind != " + IpcMessages.OK + ":",
        "    print('REFUSED', kind); sys.exit(0)",
        "client, correlation, token = struct.unpack_from('<qqq', data, 8)",
        "print('CLIENT', client, token, flush=True)",
        "time.sleep(3)",
        "");

    @TempDir
    Path base;

    private String group;
    private int gid;

    @BeforeEach
    void pickAGroup() throws Exception
    {
        // a group that exists on Debian and most distributions, which neither root nor uid 65534 has as its own
        for (final String line : Files.readAllLines(Path.of("/etc/group")))
        {
            final String[] fields = line.split(":");
            if (fields.length >= 3 && fields[0].equals("users"))
            {
                group = fields[0];
                gid = Integer.parseInt(fields[2]);
            }
        }
        Assumptions.assumeTrue(null != group, "SKIPPED: no group 'users' on this host");
    }

    @Test
    void shouldMakeTheDirectoryAndItsFilesTheGroupsAndRefuseOneOthersCouldReach() throws Exception
    {
        final IpcAccess access = IpcAccess.group(group);
        final Path dir = base.resolve("shared");
        IpcFiles.prepareDirectory(dir, access);
        assertEquals("rwxr-x---", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir, LinkOption.NOFOLLOW_LINKS)));
        assertEquals(gid, Files.getAttribute(dir, "unix:gid", LinkOption.NOFOLLOW_LINKS));
        assertNull(IpcFiles.directoryProblem(dir, access));
        // the owner-only rule refuses what the group rule made
        assertTrue(IpcFiles.directoryProblem(dir, IpcAccess.OWNER_ONLY).contains("has mode rwxr-x---"));

        for (final String mode : new String[]{"rwxrwx---", "rwxr-x--x", "rwxrwxrwx"})
        {
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString(mode));
            final IllegalStateException refused = assertThrows(IllegalStateException.class,
                () -> IpcFiles.prepareDirectory(dir, access));
            assertTrue(refused.getMessage().contains("has mode " + mode) && refused.getMessage().contains("chmod 750"),
                refused.getMessage());
        }
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
        IpcFiles.prepareDirectory(dir, access); // narrower than the rule: ours, of the group, opened to it
        assertEquals("rwxr-x---", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir, LinkOption.NOFOLLOW_LINKS)));

        Files.setAttribute(dir, "unix:gid", 0, LinkOption.NOFOLLOW_LINKS);
        final IllegalStateException foreignGroup = assertThrows(IllegalStateException.class,
            () -> IpcFiles.prepareDirectory(dir, access));
        assertTrue(foreignGroup.getMessage().contains("not " + group), foreignGroup.getMessage());

        Files.setAttribute(dir, "unix:gid", gid, LinkOption.NOFOLLOW_LINKS);
        Files.setAttribute(dir, "unix:uid", OTHER_UID, LinkOption.NOFOLLOW_LINKS);
        final IllegalStateException foreignOwner = assertThrows(IllegalStateException.class,
            () -> IpcFiles.prepareDirectory(dir, access));
        assertTrue(foreignOwner.getMessage().contains("not to the user running this NIC"), foreignOwner.getMessage());

        assertThrows(IllegalStateException.class, () -> IpcFiles.prepareDirectory(base.resolve("other"),
            IpcAccess.group("no_such_group_here")));
        assertThrows(IllegalArgumentException.class, () -> IpcAccess.group("100"));
        assertThrows(IllegalArgumentException.class, () -> IpcAccess.group("../etc"));
    }

    @Test
    void shouldServeAnotherUserOfTheGroupAndRefuseOneOutsideItByItsCredentials() throws Exception
    {
        final Path client = pythonClient("client.py", CLIENT);
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.SPRAY, Duration.ofSeconds(5),
            IpcConductor.Limits.DEFAULT, false, IpcAccess.group(group)))
        {
            final Path socket = bed.dir.resolve(CommandSocket.SOCKET_FILE);
            assertEquals("rw-rw----", PosixFilePermissions.toString(Files.getPosixFilePermissions(socket, LinkOption.NOFOLLOW_LINKS)));
            assertEquals(gid, Files.getAttribute(socket, "unix:gid", LinkOption.NOFOLLOW_LINKS));
            final Path announcement = bed.dir.resolve(IpcFileDescriptor.CONTROL_FILE);
            assertEquals("rw-r-----", PosixFilePermissions.toString(Files.getPosixFilePermissions(announcement,
                LinkOption.NOFOLLOW_LINKS)));
            assertEquals(gid, Files.getAttribute(announcement, "unix:gid", LinkOption.NOFOLLOW_LINKS));

            // uid 65534 with the group as a supplementary group: the modes let it in, and so do its credentials
            assertEquals("ANSWER", runAs(client, socket, "--groups=" + gid));
            // uid 65534 outside the group: the modes keep it out
            assertEquals("DENIED", runAs(client, socket, "--clear-groups"));
            assertEquals(0, bed.counter("ipc: socket connections refused: credentials"));
            // the same process allowed past every mode (CAP_DAC_OVERRIDE): its credentials keep it out
            assertEquals("CLOSED", runAs(client, socket, "--clear-groups", "--inh-caps=+dac_override",
                "--ambient-caps=+dac_override"));
            assertEquals(1, bed.counter("ipc: socket connections refused: credentials"));
            assertEquals(0, bed.unexpectedErrors());
        }
    }

    @Test
    void shouldLetOnlyTheNicsOwnUserOrRootStartALiveCaptureThatSeesEveryTenant() throws Exception
    {
        final Path client = pythonClient("adding.py", ADDING_CLIENT);
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.SPRAY, Duration.ofSeconds(5),
            IpcConductor.Limits.DEFAULT, false, IpcAccess.group(group));
            RawControlFile raw = new RawControlFile(bed.dir))
        {
            final Path socket = bed.dir.resolve(CommandSocket.SOCKET_FILE);
            // a tenant of another uid in the group: a client as any other, but its START_CAPTURE, valid in every field,
            // is refused; before, it started a capture of every frame of every tenant
            final Process process = new ProcessBuilder("/usr/bin/setpriv", "--reuid=" + OTHER_UID,
                "--regid=" + OTHER_UID, "--groups=" + gid, "/usr/bin/python3", client.toString(), socket.toString())
                .redirectErrorStream(true).start();
            try
            {
                final String line = new java.io.BufferedReader(new java.io.InputStreamReader(process.getInputStream()))
                    .readLine();
                assertTrue(null != line && line.startsWith("CLIENT "), "the tenant was added: " + line);
                final String[] fields = line.split(" ");
                assertTrue(raw.startCapture(Long.parseLong(fields[1]), Long.parseLong(fields[2])));
                IpcTestBed.await(() -> bed.counter("ipc: captures refused") == 1, IpcTestBed.WAIT, "the capture refused");
                assertEquals(0, bed.counter("ipc: captures started"));
            }
            finally
            {
                process.destroyForcibly();
            }
            // the NIC's own user (root here) starts one the same way
            try (NicClient owner = NicClient.connect(bed.dir, IpcTestBed.WAIT))
            {
                assertTrue(raw.startCapture(owner.clientId(), owner.token()));
                IpcTestBed.await(() -> bed.counter("ipc: captures started") == 1, IpcTestBed.WAIT, "the owner's capture");
            }
            assertEquals(0, bed.unexpectedErrors());
        }
    }

    @Test
    void shouldKeepEveryOtherUserOutOfAnOwnerOnlyNic() throws Exception
    {
        final Path client = pythonClient("client.py", CLIENT);
        try (IpcTestBed bed = new IpcTestBed(base, NicConnection.Kind.SPRAY, Duration.ofSeconds(5)))
        {
            final Path socket = bed.dir.resolve(CommandSocket.SOCKET_FILE);
            assertEquals("DENIED", runAs(client, socket, "--groups=" + gid));
            assertEquals("CLOSED", runAs(client, socket, "--groups=" + gid, "--inh-caps=+dac_override",
                "--ambient-caps=+dac_override"));
            assertEquals(1, bed.counter("ipc: socket connections refused: credentials"));
        }
    }

    /** Runs the client as uid and gid 65534 with {@code options} of setpriv; @return the one word it printed. */
    // a python client another user can run: setpriv and python3 present (else the test is skipped), `base` passable
    private Path pythonClient(final String name, final String source) throws Exception
    {
        Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/bin/setpriv")) &&
            Files.isExecutable(Path.of("/usr/bin/python3")), "SKIPPED: needs setpriv and python3");
        Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwx--x--x")); // others may pass through
        final Path client = Files.writeString(base.resolve(name), source);
        Files.setPosixFilePermissions(client, PosixFilePermissions.fromString("rw-r--r--"));
        return client;
    }

    private static String runAs(final Path client, final Path socket, final String... options) throws Exception
    {
        final List<String> command = new ArrayList<>(List.of("/usr/bin/setpriv", "--reuid=" + OTHER_UID,
            "--regid=" + OTHER_UID));
        command.addAll(List.of(options));
        command.addAll(List.of("/usr/bin/python3", client.toString(), socket.toString()));
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        try
        {
            assertTrue(process.waitFor(30, TimeUnit.SECONDS), "the client ended");
            final String output = new String(process.getInputStream().readAllBytes()).trim();
            assertEquals(0, process.exitValue(), output);
            return output;
        }
        finally
        {
            process.destroyForcibly();
        }
    }
}
