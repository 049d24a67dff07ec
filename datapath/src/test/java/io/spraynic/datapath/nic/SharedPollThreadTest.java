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
import java.util.concurrent.atomic.AtomicBoolean;
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
        final Agent[] members;
        try (AgentRunner runner = new AgentRunner(new SleepingMillisIdleStrategy(1), Throwable::printStackTrace, null,
            pollThread))
        {
            AgentRunner.startOnThread(runner);
            members = SharedPollThread.join(pollThread, new Agent[] {first, second}, Duration.ofSeconds(10));
            assertEquals(1, first.started.get());
            assertEquals(1, second.started.get());
            final int before = first.cycles.get();
            while (first.cycles.get() == before || second.cycles.get() == 0)
            {
                Thread.onSpinWait(); // both run on the poll thread's duty cycle
            }
            assertEquals(runner.thread(), first.thread);
            assertEquals(runner.thread(), second.thread);

            SharedPollThread.leave(pollThread, new Agent[] {members[0]}, Duration.ofSeconds(10));
            assertEquals(1, first.closed.get(), "leave returns once the agent's onClose has");
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
        SharedPollThread.leave(pollThread, new Agent[] {members[1]}, Duration.ofSeconds(10));
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
        final AtomicBoolean block = new AtomicBoolean();
        final Agent stuck = new CountingAgent("stuck")
        {
            public int doWork() throws InterruptedException
            {
                if (block.get())
                {
                    inside.countDown();
                    release.await(); // a duty cycle that does not end
                }
                return 0;
            }
        };
        final CountingAgent other = new CountingAgent("other");
        final DynamicCompositeAgent pollThread = new DynamicCompositeAgent("poll", stuck);
        try (AgentRunner runner = new AgentRunner(new SleepingMillisIdleStrategy(1), Throwable::printStackTrace, null,
            pollThread))
        {
            AgentRunner.startOnThread(runner);
            final Agent[] members = SharedPollThread.join(pollThread, new Agent[] {other}, Duration.ofSeconds(10));
            block.set(true);
            inside.await();
            final IllegalStateException late = assertThrows(IllegalStateException.class,
                () -> SharedPollThread.leave(pollThread, members, Duration.ofMillis(50)));
            assertTrue(late.getMessage().contains("cannot remove other"), late.getMessage());
            assertEquals(0, other.closed.get(), "still on the poll thread");
            block.set(false);
            release.countDown();
            SharedPollThread.leave(pollThread, members, Duration.ofSeconds(10));
            assertEquals(1, other.closed.get());
        }
    }

    @Test
    void shouldNotReturnFromLeaveBeforeTheAgentsOnCloseHasReturned() throws Exception
    {
        // Agrona's composite clears its remove slot before it calls onClose: a leave that trusted the slot returned
        // while a worker was still closing, and the NIC freed what the worker's close was using
        final CountDownLatch closing = new CountDownLatch(1);
        final CountDownLatch finishClose = new CountDownLatch(1);
        final CountingAgent slowToClose = new CountingAgent("slow")
        {
            public void onClose()
            {
                closing.countDown();
                try
                {
                    finishClose.await();
                }
                catch (final InterruptedException ex)
                {
                    Thread.currentThread().interrupt();
                }
                super.onClose();
            }
        };
        final DynamicCompositeAgent pollThread = new DynamicCompositeAgent("poll");
        try (AgentRunner runner = new AgentRunner(new SleepingMillisIdleStrategy(1), Throwable::printStackTrace, null,
            pollThread))
        {
            AgentRunner.startOnThread(runner);
            final Agent[] members = SharedPollThread.join(pollThread, new Agent[] {slowToClose}, Duration.ofSeconds(10));
            final Thread leaving = new Thread(() -> SharedPollThread.leave(pollThread, members, Duration.ofSeconds(20)));
            leaving.start();
            closing.await();
            leaving.join(200);
            assertTrue(leaving.isAlive(), "leave waits while the agent's onClose runs");
            finishClose.countDown();
            leaving.join(10_000);
            assertEquals(1, slowToClose.closed.get());
            assertTrue(!leaving.isAlive());
        }
    }

    @Test
    void shouldRefuseAnAgentWhoseStartFails()
    {
        final CountingAgent failing = new CountingAgent("failing")
        {
            public void onStart()
            {
                throw new IllegalStateException("cannot start");
            }
        };
        final DynamicCompositeAgent pollThread = new DynamicCompositeAgent("poll");
        try (AgentRunner runner = new AgentRunner(new SleepingMillisIdleStrategy(1), error -> {}, null, pollThread))
        {
            AgentRunner.startOnThread(runner);
            final IllegalStateException refused = assertThrows(IllegalStateException.class,
                () -> SharedPollThread.join(pollThread, new Agent[] {failing}, Duration.ofSeconds(10)));
            assertTrue(refused.getMessage().contains("onStart failed"), refused.getMessage());
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
