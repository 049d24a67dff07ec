package io.spraynic.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * deploy/systemd/spraynic-nic.service: systemd itself accepts it ({@code systemd-analyze verify}, no warning), every
 * hardening setting is there (and the check notices each one removed), its offline exposure score stays low, and
 * deploy/systemd/spraynic.conf creates the user it runs as. systemd-analyze works without systemd running (it parses
 * files only); deploy/setup-env.sh installs it (Debian's systemd package) for the tests, so its absence fails here.
 */
@Timeout(120)
class SystemdUnitTest
{
    private static final Path REPO = Path.of("..").toAbsolutePath().normalize();
    private static final Path UNIT = REPO.resolve("deploy/systemd/spraynic-nic.service");
    private static final Path SYSUSERS = REPO.resolve("deploy/systemd/spraynic.conf");
    private static final String INSTALL_PREFIX = "/opt/spraynic";
    /** The exposure systemd-analyze security gave the unit (2.4 with systemd 252); an unhardened unit gets 9.x. */
    private static final double MAX_EXPOSURE = 3.0;
    private static final Pattern EXPOSURE = Pattern.compile("Overall exposure level for \\S+: (\\d+\\.\\d+)");

    @TempDir
    Path temp;

    @Test
    void shouldVerifyWithoutAnyWarning() throws Exception
    {
        final Result result = run("systemd-analyze", "verify", installed(Files.readString(UNIT)).toString());
        assertEquals(0, result.exitCode, result.output);
        assertEquals("", result.output.strip(), "systemd-analyze verify warned");
    }

    @Test
    void shouldVerifyReportAMistypedSetting() throws Exception
    {
        final String mistyped = Files.readString(UNIT).replace("ProtectSystem=strict", "ProtectSytem=strict");
        final Result result = run("systemd-analyze", "verify", installed(mistyped).toString());
        assertTrue(result.output.contains("Unknown key 'ProtectSytem'"), result.output);
    }

    @Test
    void shouldCarryEveryHardeningSetting() throws Exception
    {
        assertEquals(List.of(), hardeningProblems(Files.readString(UNIT)));
    }

    @Test
    void shouldNoticeAnyHardeningSettingRemoved() throws Exception
    {
        final String unit = Files.readString(UNIT);
        for (final String key : REQUIRED_KEYS)
        {
            final String without = unit.lines().filter(line -> !line.startsWith(key + "="))
                .reduce("", (a, b) -> a + b + "\n");
            final List<String> problems = hardeningProblems(without);
            assertTrue(problems.stream().anyMatch(p -> p.startsWith(key)), key + " removed, yet: " + problems);
        }
        assertFalse(hardeningProblems(unit.replace("CAP_NET_ADMIN\n", "CAP_NET_ADMIN CAP_SYS_ADMIN\n")).isEmpty());
        assertFalse(hardeningProblems(unit.replace("[Service]\n", "[Service]\nMemoryDenyWriteExecute=yes\n")).isEmpty());
        assertFalse(hardeningProblems(unit.replace("CapabilityBoundingSet=CAP", "CapabilityBoundingSet=\nX=CAP")).isEmpty());
    }

    @Test
    void shouldScoreALowExposureOffline() throws Exception
    {
        final Path unit = installed(Files.readString(UNIT));
        final double exposure = exposure(unit);
        assertTrue(exposure <= MAX_EXPOSURE, "exposure " + exposure + " > " + MAX_EXPOSURE);

        final Path bare = installed("[Service]\nExecStart=" + INSTALL_PREFIX + "/spraynic nic --config net_null\n");
        assertTrue(exposure(bare) > 9.0, "an unhardened unit must score high, or the threshold proves nothing");
    }

    @Test
    void shouldCreateTheUserTheUnitRunsAs() throws Exception
    {
        final Path root = Files.createDirectories(temp.resolve("root/etc"));
        final Process process = new ProcessBuilder("systemd-sysusers", "--root=" + root.getParent(), "-")
            .redirectInput(SYSUSERS.toFile()).redirectErrorStream(true).start();
        final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(30, TimeUnit.SECONDS));
        assertEquals(0, process.exitValue(), output);
        final String passwd = Files.readString(root.resolve("passwd"));
        assertTrue(passwd.matches("(?s)spraynic:x:\\d+:\\d+:[^:]*:/var/lib/spraynic:/usr/sbin/nologin\n"), passwd);
        assertTrue(Files.readString(root.resolve("group")).startsWith("spraynic:x:"), output);
    }

    private static final List<String> REQUIRED_KEYS = List.of(
        "User", "Group", "NoNewPrivileges", "CapabilityBoundingSet", "AmbientCapabilities", "LimitMEMLOCK",
        "ProtectSystem", "ReadWritePaths", "ProtectHome", "PrivateTmp", "RestrictAddressFamilies", "DevicePolicy",
        "DeviceAllow", "SystemCallArchitectures", "SystemCallFilter", "Restart", "RuntimeDirectory", "StateDirectory",
        "EnvironmentFile", "UMask", "ProtectKernelTunables", "ProtectKernelModules", "ProtectControlGroups",
        "RestrictNamespaces", "RestrictSUIDSGID", "LockPersonality");

    /** @return one line per hardening setting that is missing or wrong, starting with the setting's name. */
    static List<String> hardeningProblems(final String unitText)
    {
        final Map<String, List<String>> service = section(unitText, "Service");
        final List<String> problems = new ArrayList<>();
        expect(problems, service, "User", "spraynic");
        expect(problems, service, "Group", "spraynic");
        expect(problems, service, "NoNewPrivileges", "yes");
        expectWords(problems, service, "CapabilityBoundingSet", Set.of("CAP_NET_RAW", "CAP_NET_ADMIN"));
        expectWords(problems, service, "AmbientCapabilities", Set.of("CAP_NET_RAW", "CAP_NET_ADMIN"));
        expect(problems, service, "LimitMEMLOCK", "infinity");
        expect(problems, service, "ProtectSystem", "strict");
        expect(problems, service, "ProtectHome", "yes");
        expect(problems, service, "PrivateTmp", "yes");
        expectWords(problems, service, "RestrictAddressFamilies",
            Set.of("AF_UNIX", "AF_PACKET", "AF_NETLINK", "AF_INET", "AF_INET6", "AF_XDP"));
        expect(problems, service, "DevicePolicy", "closed");
        expectWords(problems, service, "DeviceAllow",
            Set.of("/dev/vfio/vfio", "char-vfio", "/dev/net/tun", "char-infiniband_verbs", "rw"));
        expect(problems, service, "SystemCallArchitectures", "native");
        expectWords(problems, service, "SystemCallFilter", Set.of("@system-service", "~@privileged"));
        expect(problems, service, "Restart", "on-failure");
        expect(problems, service, "RuntimeDirectory", "spraynic");
        expect(problems, service, "StateDirectory", "spraynic");
        expect(problems, service, "EnvironmentFile", "-/etc/spraynic/nic.env");
        expect(problems, service, "UMask", "0027");
        for (final String key : List.of("ProtectKernelTunables", "ProtectKernelModules", "ProtectControlGroups",
            "RestrictNamespaces", "RestrictSUIDSGID", "LockPersonality"))
        {
            expect(problems, service, key, "yes");
        }
        // The directories the NIC writes must be those its environment names, or strict makes them read-only.
        final Set<String> writable = words(service.get("ReadWritePaths"));
        final Map<String, String> environment = new LinkedHashMap<>();
        for (final String assignment : service.getOrDefault("Environment", List.of()))
        {
            final String unquoted = assignment.replaceAll("^\"|\"$", "");
            environment.put(unquoted.substring(0, Math.max(0, unquoted.indexOf('='))),
                unquoted.substring(unquoted.indexOf('=') + 1));
        }
        final List<String> needed = new ArrayList<>(List.of("/dev/hugepages", "/dev/shm/spraynic"));
        needed.add(environment.get("SPRAYNIC_RUN_DIR"));
        needed.add(environment.get("SPRAYNIC_IPC_DIR"));
        for (final String directory : needed)
        {
            if (!writable.contains(directory) && !writable.contains("-" + directory))
            {
                problems.add("ReadWritePaths lacks " + directory + " (the environment names it or the NIC needs it): " +
                    writable);
            }
        }
        for (final String forbidden : List.of("DynamicUser", "MemoryDenyWriteExecute", "ProcSubset", "RemoveIPC"))
        {
            if (service.containsKey(forbidden))
            {
                problems.add(forbidden + " must not be set: see the unit's comments");
            }
        }
        final List<String> pre = service.getOrDefault("ExecStartPre", List.of());
        if (pre.size() != 1 || !pre.getFirst().startsWith("+" + INSTALL_PREFIX + "/deploy/prepare-host.sh --apply --owner spraynic"))
        {
            problems.add("ExecStartPre must be the one privileged (+) prepare-host.sh --owner spraynic: " + pre);
        }
        final List<String> start = service.getOrDefault("ExecStart", List.of());
        if (start.size() != 1 || !start.getFirst().startsWith(INSTALL_PREFIX + "/spraynic nic "))
        {
            problems.add("ExecStart must run spraynic nic without privileges: " + start);
        }
        return problems;
    }

    private static void expect(
        final List<String> problems, final Map<String, List<String>> service, final String key, final String value)
    {
        final List<String> values = service.get(key);
        if (null == values || !values.getLast().equals(value))
        {
            problems.add(key + " is " + values + ", not " + value);
        }
    }

    private static void expectWords(
        final List<String> problems, final Map<String, List<String>> service, final String key, final Set<String> words)
    {
        final Set<String> actual = words(service.get(key));
        if (!actual.equals(words))
        {
            problems.add(key + " is " + actual + ", not " + new TreeSet<>(words));
        }
    }

    private static Set<String> words(final List<String> values)
    {
        final Set<String> words = new TreeSet<>();
        if (null != values)
        {
            values.forEach(v -> words.addAll(List.of(v.strip().split("\\s+"))));
            words.remove("");
        }
        return words;
    }

    /** Each key's assignments in one section, in order; an empty assignment resets the list, as systemd does. */
    private static Map<String, List<String>> section(final String unitText, final String name)
    {
        final Map<String, List<String>> settings = new LinkedHashMap<>();
        String current = "";
        for (final String raw : unitText.lines().toList())
        {
            final String line = raw.strip();
            if (line.isEmpty() || line.startsWith("#") || line.startsWith(";"))
            {
                continue;
            }
            if (line.startsWith("[") && line.endsWith("]"))
            {
                current = line.substring(1, line.length() - 1);
                continue;
            }
            final int equals = line.indexOf('=');
            if (!current.equals(name) || equals < 1)
            {
                continue;
            }
            final String key = line.substring(0, equals).strip();
            final String value = line.substring(equals + 1).strip();
            final List<String> values = settings.computeIfAbsent(key, k -> new ArrayList<>());
            if (value.isEmpty())
            {
                values.clear();
                settings.remove(key);
            }
            else
            {
                values.add(value);
            }
        }
        return settings;
    }

    /** The unit as installed at the repository (systemd-analyze checks that the executables exist). */
    private Path installed(final String unitText) throws IOException
    {
        final Path unit = Files.createTempDirectory(temp, "unit").resolve("spraynic-nic.service");
        Files.writeString(unit, unitText.replace(INSTALL_PREFIX, REPO.toString()));
        return unit;
    }

    private static double exposure(final Path unit) throws Exception
    {
        final Result result = run("systemd-analyze", "security", "--offline=true", "--no-pager", unit.toString());
        final Matcher matcher = EXPOSURE.matcher(result.output);
        assertTrue(matcher.find(), result.output);
        return Double.parseDouble(matcher.group(1));
    }

    private record Result(int exitCode, String output)
    {
    }

    private static Result run(final String... command) throws IOException, InterruptedException
    {
        assertTrue(onPath(command[0]), command[0] + " is missing: it comes with Debian's systemd package, which " +
            "deploy/setup-env.sh installs for the tests (apt-get install -y systemd)");
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), String.join(" ", command) + " did not finish");
        return new Result(process.exitValue(), output);
    }

    private static boolean onPath(final String program)
    {
        for (final String directory : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(File.pathSeparator))
        {
            if (Files.isExecutable(Path.of(directory, program)))
            {
                return true;
            }
        }
        return false;
    }
}
