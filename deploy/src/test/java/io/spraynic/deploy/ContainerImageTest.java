package io.spraynic.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * deploy/container: the image built from Debian packages and the CLI's jars (build-image.sh, as {@code ./spraynic image}
 * runs it), then run by podman as {@code ./spraynic container} runs it (run.sh): {@code spraynic demo} verifies its
 * transfer with no capability and no network; {@code spraynic nic} serves a spray NIC on an af_packet port over a veth
 * in a network namespace of this test's, counts the frames sent into it, answers its health probes, is stopped by
 * SIGTERM and says so; and the Kubernetes DaemonSet's model (a root NIC serving its IPC group) holds across
 * containers. What podman gave the NIC's container is read back ({@code podman inspect}) and must be exactly: user 10001, CAP_NET_RAW and CAP_NET_ADMIN, no new privileges, a read-only root, no device, no host path, so it cannot
 * grow unnoticed. Needs root, podman, mmdebstrap and umoci (deploy/setup-env.sh installs them for CI) and the CLI
 * packaged (the reactor's package phase of cli, or ./spraynic build): {@code ./mvnw verify} or
 * {@code ./mvnw -pl deploy -am package -Dtest=ContainerImageTest -Dsurefire.failIfNoSpecifiedTests=false}.
 */
@Timeout(value = 25, unit = TimeUnit.MINUTES)
class ContainerImageTest
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long PID = ProcessHandle.current().pid();
    /** Whether the image was there before this class built it; null until built. */
    private static Boolean imageExistedBefore;

    @Test
    void shouldRunTheDemoAndANicInTheImageWithOnlyWhatANicNeeds() throws Exception
    {
        requireTools();
        final String image = DeployFiles.image();
        final String netns = "spraynic-ctr-" + PID;
        final String nicName = "spraynic-test-nic-" + PID;
        final String demoName = "spraynic-test-demo-" + PID;
        try
        {
            buildImage(image);
            final JsonNode config = JSON.readTree(podman(60, "image", "inspect", image)).get(0).get("Config");
            assertEquals("10001:10001", config.get("User").asText(), "a non-root user by default");
            assertEquals(DeployFiles.entrypoint(), config.get("Entrypoint").get(0).asText());

            // the demo: embedded NICs over net_ring, no network, no capability at all
            final DeployFiles.Result demo = DeployFiles.run(10 * 60, runScript(demoName, "none", "demo", "--size", "16m",
                "--no-baseline", "--json"));
            assertEquals(0, demo.exitCode(), demo.out() + demo.err());
            final String summary = demo.out().lines().filter(line -> line.startsWith("{")).findFirst().orElse("");
            assertTrue(summary.startsWith("{\"mode\":\"spray\",\"bytes\":16777216,") && summary.contains("\"verified\":true"),
                demo.out() + demo.err());

            // a spray NIC on an af_packet port: one end of a veth in this test's network namespace
            ip("netns", "add", netns);
            ip("-n", netns, "link", "add", "veth0", "type", "veth", "peer", "name", "veth1");
            ip("-n", netns, "link", "set", "veth0", "up");
            ip("-n", netns, "link", "set", "veth1", "up");
            final List<String> nic = runScript(nicName, "ns:/run/netns/" + netns + " --detach --keep", "nic", "--config",
                "net_af_packet", "-p", "iface=veth0", "--mode", "spray", "--ip", "10.77.0.1", "--ipc-dir",
                "/dev/shm/spraynic-spraynic", "--idle", "sleep");
            final DeployFiles.Result started = DeployFiles.run(120, nic);
            assertEquals(0, started.exitCode(), started.out() + started.err());
            awaitLog(nicName, "spraynic nic: running");

            final JsonNode inspected = JSON.readTree(podman(60, "container", "inspect", nicName)).get(0);
            assertEquals(List.of(), grantProblems(inspected), "what podman gave the NIC: " + inspected.get("HostConfig"));

            // frames sent into the other end of the veth reach the NIC's port counters
            final String send = "import socket\ns=socket.socket(socket.AF_PACKET,socket.SOCK_RAW)\ns.bind(('veth1',0))\n" +
                "for _ in range(50): s.send(b'\\xff'*6+b'\\x02\\x00\\x00\\x00\\x00\\x01'+b'\\x08\\x00'+bytes(46))\n";
            final DeployFiles.Result sent = DeployFiles.run(60, "ip", "netns", "exec", netns, "python3", "-c", send);
            assertEquals(0, sent.exitCode(), sent.err());
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            long rxPackets = 0;
            while (rxPackets < 50)
            {
                assertTrue(System.nanoTime() < deadline, "the NIC counted the 50 frames: " + rxPackets);
                final JsonNode stat = JSON.readTree(podman(60, "exec", nicName, "spraynic", "stat", "--json"));
                for (final JsonNode counter : stat.get("counters"))
                {
                    if (counter.get("label").asText().equals("port afp0: dpdk rx packets"))
                    {
                        rxPackets = counter.get("value").asLong();
                    }
                }
                Thread.sleep(200);
            }
            // the Kubernetes probes, in the NIC's container
            podman(60, "exec", nicName, "spraynic", "health", "--ipc-dir", "/dev/shm/spraynic-spraynic");
            podman(60, "exec", nicName, "spraynic", "health", "--ready", "--ipc-dir", "/dev/shm/spraynic-spraynic");

            // SIGTERM: the NIC drains and says so; the JVM exits as a SIGTERM'd process does (143), not killed (137).
            // The container is kept (run.sh --keep) so that its whole log and exit code are read after it exits:
            // following the log of a --rm container can lose the last lines when podman removes it.
            final DeployFiles.Result stopped = DeployFiles.run(90, "podman", "stop", "--time", "60", nicName);
            assertEquals(0, stopped.exitCode(), stopped.err());
            final String exitCode = podman(90, "wait", nicName).strip();
            final DeployFiles.Result logs = DeployFiles.run(60, "podman", "logs", nicName);
            final String output = logs.out() + logs.err();
            assertTrue(output.contains("spraynic nic: stopped"), "exit " + exitCode + ": " + output);
            assertEquals("143", exitCode, output);
        }
        finally
        {
            DeployFiles.run(60, "podman", "rm", "--force", "--ignore", nicName);
            DeployFiles.run(60, "podman", "rm", "--force", "--ignore", demoName);
            DeployFiles.run(60, "ip", "netns", "delete", netns);
        }
    }

    /**
     * The Kubernetes DaemonSet's security model (deploy/kubernetes/base/daemonset.yaml), in podman: the NIC as root
     * with the group spraynic (0:10001), its two capabilities, {@code --ipc-group spraynic}, the IPC directory a host
     * directory made root:spraynic 0750 as the manifest's init container makes it; an application container as the
     * image's user (10001:10001) uses it across the container boundary (memfds over the socket); a container of
     * another user cannot.
     */
    @Test
    void shouldServeTheIpcGroupFromARootNicAsTheDaemonSetRunsIt() throws Exception
    {
        requireTools();
        final String image = DeployFiles.image();
        final String nicName = "spraynic-test-rootnic-" + PID;
        final java.nio.file.Path ipcDir = Files.createTempDirectory("spraynic-ipc-group-");
        final String inContainer = "/dev/shm/spraynic-spraynic";
        try
        {
            buildImage(image);
            // what the DaemonSet's init container does to the hostPath
            assertEquals(0, DeployFiles.run(30, "chown", "0:10001", ipcDir.toString()).exitCode());
            assertEquals(0, DeployFiles.run(30, "chmod", "0750", ipcDir.toString()).exitCode());

            final DeployFiles.Result started = DeployFiles.run(120, runScript(nicName,
                "none --detach --keep --user 0:10001 --ipc-dir " + ipcDir, "nic", "--config", "net_null", "--mode", "spray",
                "--ip", "10.77.0.1", "--ipc-dir", inContainer, "--ipc-group", "spraynic", "--idle", "sleep"));
            assertEquals(0, started.exitCode(), started.out() + started.err());
            awaitLog(nicName, "spraynic nic: running");
            final JsonNode inspected = JSON.readTree(podman(60, "container", "inspect", nicName)).get(0);
            final Set<String> effective = new TreeSet<>();
            inspected.path("EffectiveCaps").forEach(cap -> effective.add(cap.asText().replaceFirst("^CAP_", "")));
            assertEquals(DeployFiles.NIC_CAPABILITIES, effective, "root's effective capabilities: the NIC's two only");
            assertEquals("0:10001", inspected.path("Config").path("User").asText());

            // the NIC's files: root's, of group spraynic, the socket 0660 and the announcement 0640 (IPC.md I10.1)
            assertEquals("0:10001:750", stat(ipcDir), "the directory");
            assertEquals("0:10001:660", stat(ipcDir.resolve("nic.sock")), "the socket");
            assertEquals("0:10001:640", stat(ipcDir.resolve("nic.ctl")), "the announcement");

            // an application as the image's user, as the example application pod runs
            final DeployFiles.Result member = DeployFiles.run(180, runScript("spraynic-test-app-" + PID,
                "none --user 10001:10001 --ipc-dir " + ipcDir, "client", "--ipc-dir", inContainer, "--size", "1m",
                "--timeout", "60"));
            assertEquals(0, member.exitCode(), "a member of spraynic: " + member.out() + member.err());
            assertTrue((member.out() + member.err()).contains("registered"), member.out() + member.err());

            // another user, not of the group: refused (it cannot even enter the directory)
            final DeployFiles.Result outsider = DeployFiles.run(180, runScript("spraynic-test-outsider-" + PID,
                "none --user 20002:20002 --ipc-dir " + ipcDir, "client", "--ipc-dir", inContainer, "--size", "1m",
                "--timeout", "10"));
            assertTrue(0 != outsider.exitCode(), "an outsider was served: " + outsider.out() + outsider.err());

            final DeployFiles.Result stopped = DeployFiles.run(90, "podman", "stop", "--time", "60", nicName);
            assertEquals(0, stopped.exitCode(), stopped.err());
            final DeployFiles.Result logs = DeployFiles.run(60, "podman", "logs", nicName);
            assertTrue((logs.out() + logs.err()).contains("spraynic nic: stopped"), logs.out() + logs.err());
        }
        finally
        {
            DeployFiles.run(60, "podman", "rm", "--force", "--ignore", nicName);
            DeployFiles.run(60, "podman", "rm", "--force", "--ignore", "spraynic-test-app-" + PID);
            DeployFiles.run(60, "podman", "rm", "--force", "--ignore", "spraynic-test-outsider-" + PID);
            DeployFiles.run(60, "rm", "-rf", ipcDir.toString());
        }
    }

    @Test
    void shouldNoticeAnyGrantBeyondANicsNeeds() throws Exception
    {
        // podman inspect of a container run.sh started, trimmed to what grantProblems reads
        final String granted = """
            {"EffectiveCaps": ["CAP_NET_ADMIN", "CAP_NET_RAW"], "Mounts": [], "Config": {"User": "10001:10001"},
             "HostConfig": {"CapAdd": ["CAP_NET_ADMIN"], "Privileged": false, "ReadonlyRootfs": true,
             "SecurityOpt": ["no-new-privileges"], "Devices": [], "Binds": [], "PidMode": "private", "IpcMode": "shareable"}}
            """;
        assertEquals(List.of(), grantProblems(JSON.readTree(granted)));
        final String[][] breakages = {
            {"\"CAP_NET_RAW\"]", "\"CAP_NET_RAW\", \"CAP_SYS_ADMIN\"]"},
            {"\"CapAdd\": [\"CAP_NET_ADMIN\"]", "\"CapAdd\": [\"CAP_NET_ADMIN\", \"CAP_IPC_LOCK\"]"},
            {"\"Privileged\": false", "\"Privileged\": true"},
            {"\"ReadonlyRootfs\": true", "\"ReadonlyRootfs\": false"},
            {"[\"no-new-privileges\"]", "[]"},
            {"10001:10001", "0:0"},
            {"\"Devices\": []", "\"Devices\": [{\"PathOnHost\": \"/dev/mem\"}]"},
            {"\"Mounts\": []", "\"Mounts\": [{\"Source\": \"/\"}]"},
            {"\"PidMode\": \"private\"", "\"PidMode\": \"host\""},
        };
        for (final String[] breakage : breakages)
        {
            assertTrue(granted.contains(breakage[0]), breakage[0]);
            assertEquals(1, grantProblems(JSON.readTree(granted.replace(breakage[0], breakage[1]))).size(), breakage[1]);
        }
        // run.sh --user takes numbers only (a name would resolve inside the image, not as the operator meant)
        final String runScript = DeployFiles.CONTAINER.resolve("run.sh").toString();
        final DeployFiles.Result asRoot = DeployFiles.run(30, runScript, "--dry-run", "--user", "0:10001", "--", "nic");
        assertEquals(0, asRoot.exitCode(), asRoot.err());
        assertTrue(asRoot.out().contains("--user 0:10001 --cap-drop all"), asRoot.out());
        for (final String user : new String[] {"root", "0", "0:", ":10001", "0:10001;id", ""})
        {
            final DeployFiles.Result refused = DeployFiles.run(30, runScript, "--dry-run", "--user", user, "--", "nic");
            assertEquals(2, refused.exitCode(), "--user '" + user + "': " + refused.out());
            assertTrue(refused.err().contains("give UID:GID in numbers"), refused.err());
        }
        // run.sh --ipc-dir with a comma: it ended source= and began other mount options (here a bind of / into it)
        for (final String dir : new String[] {"/tmp/x,source=/,destination=/host", "relative/dir"})
        {
            final DeployFiles.Result refused = DeployFiles.run(30, runScript, "--dry-run", "--ipc-dir", dir, "--", "nic");
            assertEquals(2, refused.exitCode(), "--ipc-dir '" + dir + "': " + refused.out());
            assertTrue(refused.err().contains("give an absolute path without commas"), refused.err());
        }
    }

    /** @return what podman granted the container beyond a NIC's needs, or misses of them, one sentence each. */
    static List<String> grantProblems(final JsonNode container)
    {
        final List<String> problems = new ArrayList<>();
        final JsonNode host = container.get("HostConfig");
        final Set<String> added = new TreeSet<>();
        host.path("CapAdd").forEach(cap -> added.add(cap.asText().replaceFirst("^CAP_", "")));
        final Set<String> effective = new TreeSet<>();
        container.path("EffectiveCaps").forEach(cap -> effective.add(cap.asText().replaceFirst("^CAP_", "")));
        // podman lists as added only what its default set lacks (CAP_NET_RAW is in it): the effective set is the truth
        if (!DeployFiles.NIC_CAPABILITIES.containsAll(added) || !effective.equals(DeployFiles.NIC_CAPABILITIES))
        {
            problems.add("capabilities " + added + " added, " + effective + " effective; a NIC needs " + DeployFiles.NIC_CAPABILITIES);
        }
        if (host.path("Privileged").asBoolean(true))
        {
            problems.add("privileged");
        }
        if (!host.path("ReadonlyRootfs").asBoolean(false))
        {
            problems.add("a writable root file system");
        }
        final String securityOptions = host.path("SecurityOpt").toString();
        if (!securityOptions.contains("no-new-privileges"))
        {
            problems.add("no no-new-privileges: " + securityOptions);
        }
        if (!"10001:10001".equals(container.path("Config").path("User").asText()))
        {
            problems.add("user " + container.path("Config").path("User").asText() + ", not 10001:10001");
        }
        if (!host.path("Devices").isEmpty())
        {
            problems.add("devices " + host.path("Devices") + " (af_packet needs none; vfio-pci gets only its group)");
        }
        for (final JsonNode mount : container.path("Mounts"))
        {
            problems.add("mount " + mount); // af_packet needs none: no host path, no volume
        }
        if (host.path("Binds").size() > 0)
        {
            problems.add("binds " + host.path("Binds"));
        }
        for (final String namespace : new String[] {"PidMode", "IpcMode", "UTSMode", "UsernsMode"})
        {
            if (host.path(namespace).asText().startsWith("host"))
            {
                problems.add(namespace + " " + host.path(namespace).asText());
            }
        }
        return problems;
    }

    /**
     * Builds the image once for this class (the base layer comes from target/container when this run or an earlier
     * one made it); {@link #removeImage} removes it after the last test unless it was there before.
     */
    private static synchronized void buildImage(final String image) throws Exception
    {
        if (null != imageExistedBefore)
        {
            return;
        }
        imageExistedBefore = 0 == DeployFiles.run(60, "podman", "image", "exists", image).exitCode();
        final List<String> build = List.of("env", "JAVA_HOME=" + System.getProperty("java.home"),
            DeployFiles.CONTAINER.resolve("build-image.sh").toString());
        final DeployFiles.Result built = DeployFiles.run(20 * 60, build);
        assertEquals(0, built.exitCode(), built.err());
        final List<String> lines = built.out().lines().toList();
        assertEquals(image, lines.getLast(), "build-image.sh names the image it loaded: " + built.out());
    }

    @AfterAll
    static void removeImage() throws Exception
    {
        if (Boolean.FALSE.equals(imageExistedBefore))
        {
            DeployFiles.run(120, "podman", "rmi", "--force", DeployFiles.image());
        }
    }

    /** @return uid:gid:mode (octal) of {@code path}, not following a link. */
    private static String stat(final java.nio.file.Path path) throws Exception
    {
        final DeployFiles.Result stat = DeployFiles.run(30, "stat", "-c", "%u:%g:%a", path.toString());
        assertEquals(0, stat.exitCode(), stat.err());
        return stat.out().strip();
    }

    /** @return run.sh's command line; {@code options} are run.sh's own, blank-separated. */
    private static List<String> runScript(final String name, final String options, final String... args)
    {
        final List<String> command = new ArrayList<>(List.of(DeployFiles.CONTAINER.resolve("run.sh").toString(),
            "--name", name, "--network"));
        command.addAll(List.of(options.split(" ")));
        command.add("--");
        command.addAll(List.of(args));
        return command;
    }

    private static void awaitLog(final String container, final String line) throws Exception
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (true)
        {
            final DeployFiles.Result logs = DeployFiles.run(60, "podman", "logs", container);
            if (logs.out().contains(line) || logs.err().contains(line))
            {
                return;
            }
            final DeployFiles.Result state = DeployFiles.run(60, "podman", "inspect", "--format", "{{.State.Running}}", container);
            assertTrue(state.out().strip().equals("true") && System.nanoTime() < deadline,
                container + " says \"" + line + "\": " + logs.out() + logs.err());
            Thread.sleep(250);
        }
    }

    private static String podman(final long timeoutSeconds, final String... args) throws Exception
    {
        final List<String> command = new ArrayList<>(List.of("podman"));
        command.addAll(List.of(args));
        final DeployFiles.Result result = DeployFiles.run(timeoutSeconds, command);
        assertEquals(0, result.exitCode(), String.join(" ", command) + ": " + result.out() + result.err());
        return result.out();
    }

    private static void ip(final String... args) throws Exception
    {
        final List<String> command = new ArrayList<>(List.of("ip"));
        command.addAll(List.of(args));
        final DeployFiles.Result result = DeployFiles.run(30, command);
        assertEquals(0, result.exitCode(), String.join(" ", command) + ": " + result.err());
    }

    private static void requireTools() throws Exception
    {
        final List<String> missing = new ArrayList<>();
        for (final String tool : new String[] {"podman", "mmdebstrap", "umoci", "ip", "python3"})
        {
            if (null == DeployFiles.onPath(tool))
            {
                missing.add(tool);
            }
        }
        final boolean root = "0".equals(DeployFiles.run(10, "id", "-u").out().strip());
        if (!missing.isEmpty() || !root)
        {
            // CI runs as root with deploy/setup-env.sh's tools; elsewhere, say what did not run rather than pass
            final String why = (root ? "" : "not root; ") + (missing.isEmpty() ? "" : "missing " + missing +
                " (apt-get install --no-install-recommends podman runc mmdebstrap umoci)");
            assertNull(System.getenv("CI"), why);
            Assumptions.abort("container image not built or run: " + why);
        }
        assertTrue(Files.isRegularFile(DeployFiles.REPO.resolve("cli/target/spraynic-cli.jar")),
            "the CLI is packaged (./mvnw package, or this module through the reactor's package phase)");
    }
}
