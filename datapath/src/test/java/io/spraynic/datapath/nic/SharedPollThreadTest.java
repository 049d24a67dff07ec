package io.spraynic.datapath.nic;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.DynamicCompositeAgent;
import org.agrona.concurrent.SleepingMillisIdleStrategy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class SharedPollThreadTest
{
    @Test
    void shouldStartEveryAgentOnThePollThreadAndCloseItThereWhenItLeaves()
    {
        final DynamicCompositeAgent pollThread = new DynamicCompositeAgent("poll");
        final CountingAgent first = new CountingAgent("first");
        final CountingAgent second = new CountingAgent("second");
        try (AgentRunner runner = new AgentRunner(new SleepingMillisIdleStrategy(1), Throwable::printStackTrace, null,
            pollThread))
        {
            AgentRunner.startOnThread(runner);
            SharedPollThread.join(pollThread, new Agent[] {first, second}, Duration.ofSeconds(10));
            assertEquals(1, first.started.get());
            assertEquals(1, second.started.get());
            final int before = first.cycles.get();
            while (first.cycles.get() == before || second.cycles.get() == 0)
            {
                Thread.onSpinWait(); // both run on the poll thread's duty cycle
            }
            assertEquals(runner.thread(), first.thread);
            assertEquals(runner.thread(), second.thread);

            SharedPollThread.leave(pollThread, new Agent[] {first}, Duration.ofSeconds(10));
            assertEquals(1, first.closed.get());
            assertEquals(0, second.closed.get());
            final int left = first.cycles.get();
            final int secondBefore = second.cycles.get();
            while (second.cycles.get() < secondBefore + 3)
            {
                Thread.onSpinWait();
            }
            assertEquals(left, first.cycles.get(), "an agent that left runs no more duty cycles");
        }
        assertEquals(1, second.closed.get(), "the poll thread closed the agent still on it");
        // the poll thread closed: leaving it returns at once, its agents are closed
        SharedPollThread.leave(pollThread, new Agent[] {second}, Duration.ofSeconds(10));
        assertEquals(1, second.closed.get());
    }

    @Test
    void shouldRefuseToJoinAPollThreadThatDoesNotRun()
    {
        final DynamicCompositeAgent notStarted = new DynamicCompositeAgent("idle");
        final IllegalStateException late = assertThrows(IllegalStateException.class,
            () -> SharedPollThread.join(notStarted, new Agent[] {new CountingAgent("a")}, Duration.ofMillis(50)));
        assertTrue(late.getMessage().contains("ran no duty cycle in time"), late.getMessage());

        final DynamicCompositeAgent closed = new DynamicCompositeAgent("closed");
        closed.onClose();
        final IllegalStateException gone = assertThrows(IllegalStateException.class,
            () -> SharedPollThread.join(closed, new Agent[] {new CountingAgent("b")}, Duration.ofSeconds(5)));
        assertTrue(gone.getMessage().contains("is closed"), gone.getMessage());
    }

    @Test
    void shouldNotReturnFromLeaveWhileThePollThreadMightStillRunTheAgent() throws Exception
    {
        final CountDownLatch inside = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        final Agent stuck = new CountingAgent("stuck")
        {
            public int doWork() throws InterruptedException
            {
                inside.countDown();
                release.await(); // a duty cycle that does not end
                return 0;
            }
        };
        final CountingAgent other = new CountingAgent("other");
        final DynamicCompositeAgent pollThread = new DynamicCompositeAgent("poll", other, stuck);
        try (AgentRunner runner = new AgentRunner(new SleepingMillisIdleStrategy(1), Throwable::printStackTrace, null,
            pollThread))
        {
            AgentRunner.startOnThread(runner);
            inside.await();
            final IllegalStateException late = assertThrows(IllegalStateException.class,
                () -> SharedPollThread.leave(pollThread, new Agent[] {other}, Duration.ofMillis(50)));
            assertTrue(late.getMessage().contains("cannot remove other"), late.getMessage());
            assertEquals(0, other.closed.get(), "still on the poll thread");
            release.countDown();
            SharedPollThread.leave(pollThread, new Agent[] {other}, Duration.ofSeconds(10));
            assertEquals(1, other.closed.get());
        }
    }

    private static class CountingAgent implements Agent
    {
        final AtomicInteger started = new AtomicInteger();
        final AtomicInteger closed = new AtomicInteger();
        final AtomicInteger cycles = new AtomicInteger();
        private final String name;
        volatile Thread thread;

        CountingAgent(final String name)
        {
            this.name = name;
        }

        public void onStart()
        {
            started.incrementAndGet();
        }

        public int doWork() throws Exception
        {
            thread = Thread.currentThread();
            cycles.incrementAndGet();
            return 0;
        }

        public void onClose()
        {
            closed.incrementAndGet();
        }

        public String roleName()
        {
            return name;
        }
    }
}
