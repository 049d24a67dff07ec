package io.spraynic.datapath.nic;

import io.spraynic.pmd.EalConfig;
import io.spraynic.pmd.HostHugepages;
import io.spraynic.pmd.HugepageChoice;
import io.spraynic.pmd.HugepageMode;
import io.spraynic.pmd.MempoolConfig;
import io.spraynic.pmd.NicConfig;
import io.spraynic.pmd.PortConfig;
import io.spraynic.datapath.port.DpdkTestSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two NICs on EAL running from real 2 MiB hugepages, as in production: the test reserves the pages the
 * configuration needs ({@code nr_hugepages}), mounts a hugetlbfs of its own, lets {@link HugepageChoice} switch
 * the configuration to it, checks EAL took the pages (the host's free count drops by what {@code -m} asked),
 * moves verified bytes in full 4 KiB-MTU frames over a ring pair, and gives everything back (EAL's pages, the
 * mount, the reservation), also on failure and when the JVM is killed. Needs root (CI is root); one EAL per JVM.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class EmbeddedNicHugepagesTest
{
    private static final Path NR_HUGEPAGES = HostHugepages.SYSFS.resolve("nr_hugepages");
    private static final Path FREE_HUGEPAGES = HostHugepages.SYSFS.resolve("free_hugepages");
    private static final Path MOUNT = Path.of("/tmp/spraynic-hugetlbfs-" + ProcessHandle.current().pid());
    private static final NicConfig RING = NicConfig.of(
        EalConfig.DEFAULT.withFilePrefix("spraynic-huge-" + ProcessHandle.current().pid()).withLogLevels(List.of("lib.eal:warning")),
        MempoolConfig.DEFAULT.withMbufs(4095),
        List.of(PortConfig.ringPair("a", "b").withDescriptors(512, 512), PortConfig.ringPair("b", "a").withDescriptors(512, 512)));

    private static int originalPages = -1;
    private static boolean mounted;
    private static Thread cleanupHook;
    private static DpdkNic dpdk;
    private static int freeBeforeEal;
    private static int freeWithEal;
    private static HugepageChoice choice;

    @TempDir
    Path dir;

    @BeforeAll
    static void reserveAndStart() throws Exception
    {
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")) && Files.isWritable(NR_HUGEPAGES),
            "SKIPPED: reserving hugepages and mounting a hugetlbfs need root and " + NR_HUGEPAGES);
        cleanupHook = new Thread(EmbeddedNicHugepagesTest::release, "hugepage-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanupHook); // also when the JVM is killed by a timeout
        final int neededPages = (HugepageChoice.memoryNeededMb(RING.mempool()) + 1) / 2;
        originalPages = read(NR_HUGEPAGES);
        Files.writeString(NR_HUGEPAGES, Integer.toString(originalPages + neededPages + 4));
        Files.createDirectories(MOUNT);
        DpdkTestSupport.run("mount", "-t", "hugetlbfs", "-o", "pagesize=2M,mode=0700", "nodev", MOUNT.toString());
        mounted = true;

        final HostHugepages host = HostHugepages.probe();
        assertTrue(host.available() >= neededPages, "the kernel found " + neededPages + " pages: " + host.describe());
        choice = HugepageChoice.choose(RING, HugepageMode.ON, new HostHugepages(host.available(), MOUNT.toString()));
        freeBeforeEal = read(FREE_HUGEPAGES);
        dpdk = DpdkNic.start(choice.config());
        freeWithEal = read(FREE_HUGEPAGES);
    }

    @AfterAll
    static void stopAndRelease()
    {
        try
        {
            if (null != dpdk)
            {
                dpdk.close();
            }
        }
        finally
        {
            release();
            if (null != cleanupHook)
            {
                Runtime.getRuntime().removeShutdownHook(cleanupHook);
            }
        }
    }

    @Test
    void shouldRunEalFromItsHugepagesAndMoveVerifiedBytes() throws Exception
    {
        final List<String> arguments = dpdk.eal().arguments();
        assertFalse(arguments.contains("--no-huge"), arguments.toString());
        assertTrue(arguments.contains("--huge-dir=" + MOUNT), arguments.toString());
        final int asked = Integer.parseInt(arguments.get(arguments.indexOf("-m") + 1)) / 2;
        assertTrue(freeBeforeEal - freeWithEal >= asked,
            "EAL took the " + asked + " pages it asked for: free went from " + freeBeforeEal + " to " + freeWithEal);

        final MaxFrameTransfer.Outcome outcome = MaxFrameTransfer.run(dpdk, "a", "b", new EmbeddedNicConfig(),
            new EmbeddedNicConfig(), dir, 4L << 20);
        assertTrue(outcome.verified(), outcome.detail());
        assertEquals(4096, outcome.mtuA());
        assertTrue(outcome.longestFrameA() > 4096, "full-size frames from hugepage mbufs: " + outcome.longestFrameA());
    }

    /** Unmounts and gives the reservation back; idempotent, for the hook and the normal end alike. */
    private static synchronized void release()
    {
        if (mounted)
        {
            // --huge-unlink left no files, so nothing holds the pages once EAL unmapped them; lazily in case a
            // killed JVM's mappings are still being torn down
            DpdkTestSupport.run(false, "umount", "-l", MOUNT.toString());
            mounted = false;
        }
        try
        {
            Files.deleteIfExists(MOUNT);
            if (originalPages >= 0)
            {
                Files.writeString(NR_HUGEPAGES, Integer.toString(originalPages));
                originalPages = -1;
            }
        }
        catch (final IOException ex)
        {
            System.err.println("hugepage cleanup: " + ex);
        }
    }

    private static int read(final Path file) throws IOException
    {
        return Integer.parseInt(Files.readString(file).trim());
    }
}
