package io.spraynic.pmd;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(10)
class HugepageChoiceTest
{
    private static final String MOUNTS = """
        sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0
        nodev /mnt/huge1g hugetlbfs rw,relatime,pagesize=1024M 0 0
        nodev /tmp/my\\040huge hugetlbfs rw,relatime,pagesize=2M 0 0
        hugetlbfs /dev/hugepages hugetlbfs rw,relatime,pagesize=2M 0 0
        """;
    private static final NicConfig RING = PmdConfigs.load("net_ring", java.util.Map.of());

    @Test
    void shouldCountFreePagesLessReservedAndFindTheFirstUsableTwoMegabyteMount()
    {
        final HostHugepages host = HostHugepages.parse("300\n", "20\n", MOUNTS, mount -> true);
        assertEquals(280, host.available());
        assertEquals("/dev/hugepages", host.mount()); // not the 1 GiB one, not the escaped path
        assertEquals(0, HostHugepages.parse("x", "0", MOUNTS, mount -> true).available());
        assertFalse(HostHugepages.parse("10", "0", "proc /proc proc rw 0 0\n", mount -> true).mounted());
        assertEquals("/h", HostHugepages.parse("10", "0", "nodev /h hugetlbfs rw 0 0\n", mount -> true).mount()); // default page size
        assertEquals("/tmp/mine", HostHugepages.parse("10", "0", MOUNTS + "nodev /tmp/mine hugetlbfs rw,mode=0700 0 0\n",
            mount -> mount.equals("/tmp/mine")).mount(), "the first this process may write to");
    }

    @Test
    void shouldUseHugepagesWhenTheHostHasEnoughForThePoolAndEal()
    {
        final int neededMb = HugepageChoice.memoryNeededMb(RING.mempool());
        assertEquals((8191 * 4672 + (1 << 20) - 1 >> 20) + 64, neededMb);
        final HugepageChoice choice = HugepageChoice.choose(RING, HugepageMode.AUTO, new HostHugepages(neededMb / 2 + 1, "/dev/hugepages"));
        final List<String> args = choice.config().ealArguments();
        assertFalse(args.contains("--no-huge"), args.toString());
        assertTrue(args.contains("--huge-dir=/dev/hugepages"), args.toString());
        assertTrue(args.contains("--huge-unlink"), args.toString());
        assertEquals(Integer.toString((neededMb + 1) / 2 * 2), args.get(args.indexOf("-m") + 1));
        assertTrue(choice.notice().startsWith("hugepages: " + (neededMb + 1) / 2 + " x 2 MiB from /dev/hugepages"), choice.notice());
        assertEquals(choice.config(), HugepageChoice.choose(RING, HugepageMode.ON, new HostHugepages(1000, "/dev/hugepages")).config());
    }

    @Test
    void shouldFallBackToNoHugeWithANoticeWhenTooFewAreFreeOrNoneIsMounted()
    {
        for (final HostHugepages host : List.of(new HostHugepages(10, "/dev/hugepages"), new HostHugepages(1000, ""),
            HostHugepages.NONE))
        {
            final HugepageChoice choice = HugepageChoice.choose(RING, HugepageMode.AUTO, host);
            assertEquals(RING, choice.config());
            assertTrue(choice.notice().contains("EAL runs with --no-huge") && !choice.notice().contains("\n"), choice.notice());
            final IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                () -> HugepageChoice.choose(RING, HugepageMode.ON, host));
            assertTrue(refused.getMessage().startsWith("--hugepages on: the host has " + host.describe()), refused.getMessage());
        }
    }

    @Test
    void shouldForceNoHugeWhenOffEvenOverAHugepageConfig()
    {
        final NicConfig huge = HugepageChoice.choose(RING, HugepageMode.ON, new HostHugepages(1000, "/dev/hugepages")).config();
        final HugepageChoice off = HugepageChoice.choose(huge, HugepageMode.OFF, new HostHugepages(1000, "/dev/hugepages"));
        final List<String> args = off.config().ealArguments();
        assertTrue(args.contains("--no-huge"), args.toString());
        assertFalse(args.stream().anyMatch(a -> a.startsWith("--huge")), args.toString());
        assertEquals("512", args.get(args.indexOf("-m") + 1));
        // a config that asks for hugepages itself keeps them under auto
        assertEquals(huge, HugepageChoice.choose(huge, HugepageMode.AUTO, HostHugepages.NONE).config());
    }

    @Test
    void shouldParseTheModes()
    {
        assertEquals(HugepageMode.AUTO, HugepageMode.parse("auto"));
        assertEquals(HugepageMode.OFF, HugepageMode.parse("off"));
        assertThrows(IllegalArgumentException.class, () -> HugepageMode.parse("yes"));
    }
}
