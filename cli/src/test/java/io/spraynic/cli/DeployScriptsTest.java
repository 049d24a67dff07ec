package io.spraynic.cli;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * deploy/prepare-host.sh in check mode (it changes nothing without --apply): problems are one line
 * each, with what to do, and fail the run.
 */
class DeployScriptsTest
{
    private static final Path SCRIPT = Path.of("..", "deploy", "prepare-host.sh");

    @Test
    void shouldPassChecksAndChangeNothingWithoutApply() throws Exception
    {
        final Result result = run("--hugepages", "512M");
        assertEquals(0, result.exitCode, result.output);
        final int have = Integer.parseInt(Files.readString(Path.of("/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"))
            .strip());
        assertTrue(result.output.contains(have >= 256 ? "would run: dpdk-hugepages.py --pagesize 2M --mount" :
            "would run: dpdk-hugepages.py --pagesize 2M --reserve 512M --mount"), result.output);
        // never --setup, which cleared every pool of the host (other applications' pages) and unmounted /dev/hugepages
        assertFalse(result.output.contains("--setup") || result.output.contains("--clear"), result.output);
        assertTrue(result.output.contains("rerun with --apply"), result.output);
        // whole pages: dpdk-hugepages.py refuses a size that is not a multiple of 2 MiB (the unit's start failed)
        if (have < 2)
        {
            assertTrue(run("--hugepages", "3M").output.contains("--reserve 4M --mount"));
        }
        final Result none = run("--hugepages", "0");
        assertTrue(none.output.contains("hugepages: enough reserved; left as they are"), none.output);
        assertTrue(none.output.contains("would run: dpdk-hugepages.py --pagesize 2M --mount"), none.output);
    }

    @Test
    void shouldReportMissingDeviceAndBadSizeAsProblems() throws Exception
    {
        final Result result = run("--hugepages", "lots", "--bind", "0000:ff:1f.7", "--iommu-off");
        assertEquals(1, result.exitCode, result.output);
        assertTrue(result.output.contains("PROBLEM: --hugepages lots is not a size like 512M or 2G"), result.output);
        assertTrue(result.output.contains("PROBLEM: no PCI device 0000:ff:1f.7 (dpdk-devbind.py --status lists them)"),
            result.output);
        assertTrue(result.output.contains("2 problem(s); fix them and run again"), result.output);
    }

    @Test
    void shouldPlanAHugepageMountOnlyTheOwnerMayUse() throws Exception
    {
        final Result result = run("--hugepages", "512M", "--owner", "nobody");
        assertEquals(0, result.exitCode, result.output);
        assertTrue(result.output.contains("would run: mount -t hugetlbfs -o pagesize=2M,uid=65534,gid=65534,mode=0700 " +
            "nodev /dev/hugepages-nobody"), result.output);
    }

    @Test
    void shouldRefuseAnOwnerThatDoesNotExist() throws Exception
    {
        final String user = "spraynic-none-" + ProcessHandle.current().pid();
        final Result result = run("--owner", user);
        assertEquals(1, result.exitCode, result.output);
        assertTrue(result.output.contains("PROBLEM: --owner " + user + ": no such user (create it: systemd-sysusers " +
            "deploy/systemd/spraynic.conf)"), result.output);
    }

    @Test
    void shouldRefuseUnknownOption() throws Exception
    {
        final Result result = run("--frobnicate");
        assertEquals(2, result.exitCode);
        assertEquals("prepare-host: unknown option --frobnicate (see --help)", result.output.strip());
    }

    private record Result(int exitCode, String output)
    {
    }

    private static Result run(final String... arguments) throws IOException, InterruptedException
    {
        final List<String> command = new java.util.ArrayList<>(List.of("bash", SCRIPT.toString()));
        command.addAll(List.of(arguments));
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(30, TimeUnit.SECONDS));
        return new Result(process.exitValue(), output);
    }
}
