package io.spraynic.datapath.transport.spray;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.management.ManagementFactory;
import java.util.HashSet;
import java.util.Set;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/PROTOCOL.md S7.7.1: a port a path timed out on is suspect; while its plane has one, rotation (and S7.3, S7.5)
 * moves paths to ports proven healthy since, so that it stops walking into a dead link; the memory is bounded and
 * expires. Virtual time: every time is a number the test gives.
 */
@Timeout(10)
class PathSchedulerSuspectPortTest
{
    private static final long EXPIRY = 1_000_000;

    /** Every packet rotates (a budget of 1), so each placement after the first moves the path to a new port. */
    private static PathScheduler scheduler(final int paths, final int planes)
    {
        final SprayConfig config = new SprayConfig().planes(planes).portRotation(1, 1).suspectPortNanos(EXPIRY);
        return new PathScheduler(paths, config, new SplittableRandom(7), 1000, 50_000);
    }

    /** The path sends one packet on its port at {@code sentAt}, which is acknowledged; then it rotates. */
    private static int provePortAndRotate(final PathScheduler scheduler, final int path, final long sentAt)
    {
        final int port = scheduler.sourcePort(path);
        scheduler.sendWindows[path].send(sentAt, sentAt);
        scheduler.sendWindows[path].drain(handle -> { });
        scheduler.onAckTaken(path, (int)sentAt, sentAt + 10);
        scheduler.answered(path, sentAt);
        scheduler.placedOnPort(path); // the budget was spent and nothing is in flight: a new port
        return port;
    }

    /** Path 0 has a packet in flight since {@code sentAt} on its port, and it times out at {@code now}. */
    private static int timeOut(final PathScheduler scheduler, final int path, final long sentAt, final long now)
    {
        if (scheduler.sendWindows[path].outstanding() == 0)
        {
            scheduler.sendWindows[path].send(sentAt, sentAt);
        }
        scheduler.onTimeout(path, now);
        return scheduler.sourcePort(path);
    }

    @Test
    void shouldRefuseASuspectTimeThatIsNegativeOrWouldWrapTheClockS771()
    {
        final SprayConfig config = new SprayConfig();
        for (final long bad : new long[] {-1, Long.MIN_VALUE, SprayConfig.MAX_SUSPECT_PORT_NANOS + 1, Long.MAX_VALUE})
        {
            final IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                () -> config.suspectPortNanos(bad));
            assertTrue(refused.getMessage().contains("suspectPort"), refused.getMessage());
        }
        assertEquals(1_000_000_000L, config.suspectPortNanos, "a refused value leaves the default");
        config.suspectPortNanos(0).suspectPortNanos(SprayConfig.MAX_SUSPECT_PORT_NANOS);
        assertEquals(SprayConfig.MAX_SUSPECT_PORT_NANOS, config.suspectPortNanos);
    }

    @Test
    void shouldMoveToPortsProvenHealthySinceTheLossWhileAPortIsSuspect()
    {
        final PathScheduler scheduler = scheduler(2, 1);
        scheduler.placedOnPort(1);
        final Set<Integer> provenSinceLoss = new HashSet<>();
        for (final long at : new long[]{100, 200, 300, 400, 500})
        {
            final int port = provePortAndRotate(scheduler, 1, at);
            if (at > 250)
            {
                provenSinceLoss.add(port);
            }
        }
        timeOut(scheduler, 0, 250, 1_000); // path 0's packet sent at 250 is lost: a link may have died before it
        assertEquals(250, scheduler.times.ports.waryFrom(0));
        for (int i = 0; i < 50; i++)
        {
            provenSinceLoss.add(provePortAndRotate(scheduler, 1, 600 + i)); // its port answered: healthy too
            assertTrue(provenSinceLoss.contains(scheduler.sourcePort(1)),
                "rotated onto a port not proven since the loss: " + scheduler.sourcePort(1) + ", " + i);
        }
        assertEquals(3 + 1, provenSinceLoss.size(), "the three proven after 250 and the port it held at the loss");
    }

    @Test
    void shouldDrawNewPortsAtRandomWithoutASuspectPort()
    {
        final PathScheduler scheduler = scheduler(2, 1);
        scheduler.placedOnPort(1);
        final Set<Integer> proven = new HashSet<>();
        for (int i = 0; i < 10; i++)
        {
            proven.add(provePortAndRotate(scheduler, 1, 100 + i));
        }
        int reused = 0;
        for (int i = 0; i < 50; i++)
        {
            reused += proven.contains(provePortAndRotate(scheduler, 1, 200 + i)) ? 1 : 0;
        }
        assertEquals(0, reused, "no port is suspect: every new port is drawn at random (S7.7's spread)");
    }

    @Test
    void shouldNeverDrawASuspectPortWithinTheExpiry()
    {
        final PathScheduler scheduler = scheduler(3, 1);
        scheduler.placedOnPort(1);
        final Set<Integer> healthy = new HashSet<>();
        for (int i = 0; i < 4; i++)
        {
            healthy.add(provePortAndRotate(scheduler, 1, 100 + i));
        }
        timeOut(scheduler, 0, 50, 1_000); // the plane is wary: path 2's next port is one proven since 50
        scheduler.placedOnPort(2);
        provePortAndRotate(scheduler, 2, 105);
        final int suspect = scheduler.sourcePort(2);
        assertTrue(healthy.contains(suspect), "a port proven healthy: " + suspect);
        timeOut(scheduler, 2, 900, 2_000); // and then it times out: suspect, though it was healthy
        scheduler.sourcePort(2, scheduler.newSourcePort(2)); // the path leaves it (S7.5 probes on a new port)
        assertNotEquals(suspect, scheduler.sourcePort(2));
        for (int i = 0; i < 200; i++)
        {
            final int port = scheduler.newSourcePort(1);
            assertNotEquals(suspect, port, "drawn within the expiry: " + i);
            assertTrue(healthy.contains(port) || port == 50_002, "a port proven since 50: " + port);
        }
        assertTrue(scheduler.times.ports.isSuspect(0, suspect));
        scheduler.onAckTaken(1, 1_000, 2_000 + EXPIRY); // time passes, on another path's ACK
        assertFalse(scheduler.times.ports.isSuspect(0, suspect), "expired");
        assertEquals(PortMemory.NONE, scheduler.times.ports.waryFrom(0));
    }

    @Test
    void shouldForgetASuspicionOnAnAckOfThePathAndOnExpiry()
    {
        final PathScheduler scheduler = scheduler(2, 1);
        final int port = timeOut(scheduler, 0, 100, 1_000);
        assertTrue(scheduler.times.ports.isSuspect(0, port));
        assertEquals(100, scheduler.times.ports.waryFrom(0));
        scheduler.onAckTaken(0, 1, 1_200); // a random loss: the port answers
        assertFalse(scheduler.times.ports.isSuspect(0, port));
        assertEquals(PortMemory.NONE, scheduler.times.ports.waryFrom(0), "no suspect left: rotation at random again");

        final int again = timeOut(scheduler, 0, 1_300, 2_000);
        scheduler.onAckTaken(1, 1, 2_000 + EXPIRY - 1);
        assertTrue(scheduler.times.ports.isSuspect(0, again), "within the expiry");
        scheduler.onAckTaken(1, 2, 2_000 + EXPIRY);
        assertFalse(scheduler.times.ports.isSuspect(0, again), "expired");
        assertEquals(PortMemory.NONE, scheduler.times.ports.waryFrom(0));
    }

    @Test
    void shouldKeepEachPlanesSuspicionsToItself()
    {
        final PathScheduler scheduler = scheduler(4, 2); // paths 0, 2 on plane 0; 1, 3 on plane 1
        scheduler.placedOnPort(3);
        final Set<Integer> planeOne = new HashSet<>();
        for (int i = 0; i < 4; i++)
        {
            planeOne.add(provePortAndRotate(scheduler, 3, 100 + i));
        }
        timeOut(scheduler, 0, 50, 1_000); // plane 0 is wary; plane 1 is not
        assertEquals(PortMemory.NONE, scheduler.times.ports.waryFrom(1));
        for (int i = 0; i < 20; i++)
        {
            assertFalse(planeOne.contains(scheduler.newSourcePort(2)), "plane 1's ports prove nothing on plane 0");
        }
    }

    @Test
    void shouldFallBackToARandomPortWhenEveryHealthyPortIsSuspect()
    {
        final PathScheduler scheduler = scheduler(8, 1);
        scheduler.placedOnPort(1);
        final int[] healthy = new int[4];
        for (int i = 0; i < healthy.length; i++)
        {
            healthy[i] = provePortAndRotate(scheduler, 1, 100 + i);
        }
        for (int i = 0; i < healthy.length; i++)
        {
            scheduler.sourcePort(2 + i, healthy[i]);
            timeOut(scheduler, 2 + i, 50, 1_000 + i);
        }
        for (int i = 0; i < 100; i++)
        {
            final int port = scheduler.newSourcePort(1);
            for (final int suspect : healthy)
            {
                assertNotEquals(suspect, port);
            }
            assertTrue(port >= 49152 && port <= 65535);
        }
    }

    @Test
    void shouldHoldABoundedMemoryUnderAStreamOfTimeoutsAndDrawWithoutAllocating()
    {
        final PathScheduler scheduler = scheduler(8, 1);
        final PortMemory ports = scheduler.times.ports;
        long now = 1_000;
        for (int round = 0; round < 20_000; round++) // a hostile stream: every path times out, on port after port
        {
            final int path = round & 7;
            scheduler.sourcePort(path, scheduler.unusedSourcePort());
            now += 10;
            timeOut(scheduler, path, 0, now);
        }
        int suspects = 0;
        for (int port = 0; port < 65536; port++)
        {
            suspects += ports.isSuspect(0, port) ? 1 : 0;
        }
        assertEquals(8, suspects, "one entry per path (8), the oldest overwritten");
        long allocated = Long.MAX_VALUE;
        for (int round = 0; round < 5; round++) // the first rounds warm up (the interpreter allocates)
        {
            boolean allValid = true;
            final long before = allocatedBytes();
            for (int i = 0; i < 10_000; i++)
            {
                final int port = scheduler.newSourcePort(1);
                allValid &= port >= 49152 && port <= 65535 && !ports.isSuspect(0, port);
            }
            allocated = Math.min(allocated, allocatedBytes() - before);
            assertTrue(allValid);
        }
        assertTrue(allocated < 1024, "10,000 draws allocated " + allocated + " B");
    }

    private static long allocatedBytes()
    {
        return ((com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean()).getCurrentThreadAllocatedBytes();
    }
}
