package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.verbs.CompletionQueue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The parameters a connection is opened with are refused, naming what is wrong, before anything is sized by them
 * (S1.3 paths, S4.3 MTU, S1.4 streams, queue depths, S10.2 READ limits and window, completion queues).
 */
@Timeout(10)
class SprayConnectionConfigTest
{
    private static SprayConnectionConfig valid()
    {
        return new SprayConnectionConfig().completionQueues(new CompletionQueue(4), new CompletionQueue(4));
    }

    private static void assertRefused(final String expected, final Consumer<SprayConnectionConfig> change)
    {
        final SprayConnectionConfig config = valid();
        change.accept(config);
        final IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, config::validate);
        assertTrue(refused.getMessage().contains(expected), refused.getMessage());
    }

    @Test
    void shouldAcceptTheDefaultsWithCompletionQueues()
    {
        assertDoesNotThrow(valid()::validate);
        final SprayConnectionConfig edges = valid();
        edges.paths = 64;
        edges.mtu = 256;
        edges.streams = 65536;
        edges.sendQueueDepth = 32768;
        edges.responderReads = SprayConnectionConfig.MAX_READS;
        assertDoesNotThrow(edges::validate);
    }

    @Test
    void shouldRefuseEachParameterOutOfRange()
    {
        assertRefused("paths", c -> c.paths = 0);
        assertRefused("paths", c -> c.paths = 65);
        assertRefused("MTU", c -> c.mtu = 1500);
        assertRefused("streams", c -> c.streams = 0);
        assertRefused("streams", c -> c.streams = 65537);
        assertRefused("queue depths", c -> c.sendQueueDepth = 32769);
        assertRefused("queue depths", c -> c.receiveQueueDepth = 0);
        assertRefused("queue depths", c -> c.maxInboundMessages = 0);
        assertRefused("READ limits", c -> c.responderReads = 0);
        assertRefused("READ limits", c -> c.responderReads = SprayConnectionConfig.MAX_READS + 1);
        assertRefused("READ limits", c -> c.peerWindow = 0);
        assertRefused("READ limits", c -> c.peerReads = 0);
        assertRefused("completion queues", c -> c.sendCq = null);
        assertRefused("completion queues", c -> c.receiveCq = null);
    }
}
