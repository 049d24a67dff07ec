package io.spraynic.datapath.transport.rocev2;

import io.spraynic.datapath.nic.NicWorker;
import io.spraynic.datapath.port.PortFrameSink;

import io.spraynic.datapath.port.InMemoryLink;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.SystemNanoClock;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The two endpoints each driven by a NIC worker on its own Agrona agent thread, in real time: work is posted before the agents start
 * (the engine belongs to its agent's thread from then on), completions are polled from the test thread.
 */
class RcAgentThreadsTest
{
    private static final int LENGTH = 16 * 1024 * 1024;

    @Test
    void shouldTransferSixteenMebibytesBetweenAgentThreads() throws InterruptedException
    {
        final int slot = InMemoryLink.HEADROOM + PathMtu.maxFrameLength(PathMtu.MTU_4096) + 64;
        try (InMemoryLink link = new InMemoryLink("t", 1024, slot); Arena arena = Arena.ofShared())
        {
            final int room = slot - InMemoryLink.HEADROOM;
            final ProtectionDomain pdA = new ProtectionDomain();
            final ProtectionDomain pdB = new ProtectionDomain();
            final PortFrameSink sinkA = new PortFrameSink(link.first(), 32, room);
            final PortFrameSink sinkB = new PortFrameSink(link.second(), 32, room);
            final RcEngine engineA = new RcEngine(RcEngineConfig.defaults(RcTestbed.MAC_A, RcTestbed.IP_A), pdA, sinkA);
            final RcEngine engineB = new RcEngine(RcEngineConfig.defaults(RcTestbed.MAC_B, RcTestbed.IP_B), pdB, sinkB);
            final CompletionQueue cqA = new CompletionQueue(64);
            final CompletionQueue cqB = new CompletionQueue(64);
            final RcQueuePair qpA = engineA.createQueuePair(cqA, cqA, 16, 16);
            final RcQueuePair qpB = engineB.createQueuePair(cqB, cqB, 16, 16);
            qpA.toInit(AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ);
            qpB.toInit(AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ);
            qpA.toRtr(RcConnectionAttributes.of(qpB.qpNumber(), RcTestbed.MAC_B, RcTestbed.IP_B, 0xC001, 4096, 10, 20)
                .withRetry(TimeUnit.MILLISECONDS.toNanos(20), 7));
            qpB.toRtr(RcConnectionAttributes.of(qpA.qpNumber(), RcTestbed.MAC_A, RcTestbed.IP_A, 0xC002, 4096, 20, 10)
                .withRetry(TimeUnit.MILLISECONDS.toNanos(20), 7));
            qpA.toRts();
            qpB.toRts();

            final MemoryRegion source = pdA.register(arena.allocate(LENGTH, 64), AccessFlags.LOCAL_WRITE);
            final MemoryRegion readBack = pdA.register(arena.allocate(LENGTH, 64), AccessFlags.LOCAL_WRITE);
            final MemoryRegion target = pdB.register(arena.allocate(LENGTH, 64),
                AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ);
            final MemoryRegion inbox = pdB.register(arena.allocate(LENGTH, 64), AccessFlags.LOCAL_WRITE);
            RcTestbed.fill(source.segment(), 2026);
            final SendWorkRequest send = new SendWorkRequest();
            qpB.postReceive(new ReceiveWorkRequest().wrId(9).buffer(inbox, inbox.address(), LENGTH));
            qpA.postSend(send.reset().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(source, source.address(), LENGTH).remote(target.address(), target.rkey()));
            qpA.postSend(send.reset().wrId(2).opcode(WorkRequestOpcode.RDMA_READ)
                .local(readBack, readBack.address(), LENGTH).remote(target.address(), target.rkey()));
            qpA.postSend(send.reset().wrId(3).opcode(WorkRequestOpcode.SEND).local(source, source.address(), LENGTH));

            final AgentRunner runnerA = NicWorker.builder().roleName("a").ports(link.first()).rocev2(engineA, sinkA)
                .protectionDomain(pdA).clock(new SystemNanoClock()).idleStrategy(new BackoffIdleStrategy())
                .buildRunner(Throwable::printStackTrace);
            final AgentRunner runnerB = NicWorker.builder().roleName("b").ports(link.second()).rocev2(engineB, sinkB)
                .protectionDomain(pdB).clock(new SystemNanoClock()).idleStrategy(new BackoffIdleStrategy())
                .buildRunner(Throwable::printStackTrace);
            AgentRunner.startOnThread(runnerA);
            AgentRunner.startOnThread(runnerB);
            try
            {
                final WorkCompletion wc = new WorkCompletion();
                for (int expected = 1; expected <= 3; expected++)
                {
                    assertTrue(poll(cqA, wc, 30_000), "completion " + expected);
                    assertEquals(WorkCompletionStatus.SUCCESS, wc.status(), wc::toString);
                    assertEquals(expected, wc.wrId());
                }
                assertTrue(poll(cqB, wc, 5_000));
                assertEquals(9, wc.wrId());
                assertEquals(LENGTH, wc.byteLength());
            }
            finally
            {
                runnerA.close();
                runnerB.close();
            }
            assertEquals(-1, source.segment().mismatch(target.segment()), "write");
            assertEquals(-1, source.segment().mismatch(readBack.segment()), "read");
            assertEquals(-1, source.segment().mismatch(inbox.segment()), "send");
        }
    }

    private static boolean poll(final CompletionQueue cq, final WorkCompletion wc, final long timeoutMillis)
        throws InterruptedException
    {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (System.nanoTime() < deadline)
        {
            if (cq.poll(wc))
            {
                return true;
            }
            Thread.sleep(1);
        }
        return false;
    }
}
