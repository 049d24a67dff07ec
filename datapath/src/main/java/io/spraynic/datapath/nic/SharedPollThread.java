package io.spraynic.datapath.nic;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.DynamicCompositeAgent;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

/**
 * Puts a NIC's workers on a poll thread that other agents share ({@link EmbeddedNicConfig#pollThread}) and takes them
 * off again: the {@link DynamicCompositeAgent}'s own thread adds an agent (calling its {@code onStart}) or removes it
 * (calling its {@code onClose}) at the start of its next duty cycle, and this waits for that, one agent at a time.
 * Control path only.
 */
final class SharedPollThread
{
    private static final long WAIT_PARK_NANOS = 100_000L;

    private SharedPollThread()
    {
    }

    /**
     * Adds {@code agents} to {@code pollThread}, waiting until its thread has started each (its {@code onStart}
     * returned, not only taken the add: Agrona's composite clears its add slot before it calls {@code onStart}).
     *
     * @return the members the poll thread runs, one per agent, to give to {@link #leave} (and nothing else).
     * @throws IllegalStateException when the poll thread is closed, does not run a duty cycle within {@code timeout},
     *                               or an agent's {@code onStart} threw (the composite then closed it).
     */
    static Agent[] join(final DynamicCompositeAgent pollThread, final Agent[] agents, final Duration timeout)
    {
        final long deadline = System.nanoTime() + timeout.toNanos();
        final Member[] members = new Member[agents.length];
        for (int i = 0; i < agents.length; i++)
        {
            final Member member = new Member(agents[i]);
            final String action = "add " + member.roleName();
            // the composite refuses adds until its runner's thread started it; then another NIC's add may be under way
            while (!isRunning(pollThread, action) || !pollThread.tryAdd(member))
            {
                pause(pollThread, deadline, action);
            }
            while (!member.started)
            {
                if (member.closed)
                {
                    throw new IllegalStateException("cannot " + action + ": its onStart failed on the shared poll " +
                        "thread " + pollThread.roleName() + " (see its error handler)");
                }
                isRunning(pollThread, action);
                pause(pollThread, deadline, action);
            }
            members[i] = member;
        }
        return members;
    }

    /**
     * Removes {@code members} (what {@link #join} returned) from {@code pollThread}, waiting until its thread has
     * closed each (its {@code onClose} returned: the composite clears its remove slot before it calls
     * {@code onClose}, so that slot says nothing about whether the agent still runs); returns at once for a poll
     * thread that never started, and waits for its own close of them when it is closed.
     *
     * @throws IllegalStateException when the poll thread does not close them within {@code timeout}: the agents may
     *                               still run, so whatever they use must stay.
     */
    static void leave(final DynamicCompositeAgent pollThread, final Agent[] members, final Duration timeout)
    {
        final long deadline = System.nanoTime() + timeout.toNanos();
        for (final Agent agent : members)
        {
            final Member member = (Member)agent;
            final String action = "remove " + member.roleName();
            boolean asked = false;
            while (!member.closed)
            {
                final DynamicCompositeAgent.Status status = pollThread.status();
                if (status == DynamicCompositeAgent.Status.INIT)
                {
                    return; // never started: nothing ever ran or will run them
                }
                if (!asked && status == DynamicCompositeAgent.Status.ACTIVE)
                {
                    asked = tryRemove(pollThread, member);
                }
                pause(pollThread, deadline, action); // a closed composite closes its agents on its own thread
            }
        }
    }

    /** An agent on the poll thread, telling the control thread when its start and close have returned. */
    private static final class Member implements Agent
    {
        private final Agent agent;
        private volatile boolean started;
        private volatile boolean closed;

        Member(final Agent agent)
        {
            this.agent = agent;
        }

        public void onStart()
        {
            agent.onStart();
            started = true;
        }

        public int doWork() throws Exception
        {
            return agent.doWork();
        }

        public void onClose()
        {
            try
            {
                agent.onClose();
            }
            finally
            {
                closed = true;
            }
        }

        public String roleName()
        {
            return agent.roleName();
        }
    }

    private static boolean isRunning(final DynamicCompositeAgent pollThread, final String action)
    {
        final DynamicCompositeAgent.Status status = pollThread.status();
        if (status == DynamicCompositeAgent.Status.CLOSED)
        {
            throw new IllegalStateException("cannot " + action + ": the shared poll thread " + pollThread.roleName() +
                " is closed");
        }
        return status == DynamicCompositeAgent.Status.ACTIVE;
    }

    private static boolean tryRemove(final DynamicCompositeAgent pollThread, final Agent agent)
    {
        try
        {
            return pollThread.status() == DynamicCompositeAgent.Status.ACTIVE && pollThread.tryRemove(agent);
        }
        catch (final IllegalStateException closedMeanwhile)
        {
            return false; // the caller sees the status and returns: a closed composite closed its agents
        }
    }

    private static void pause(final DynamicCompositeAgent pollThread, final long deadline, final String action)
    {
        if (System.nanoTime() - deadline > 0)
        {
            throw new IllegalStateException("cannot " + action + ": the shared poll thread " + pollThread.roleName() +
                " ran no duty cycle in time (is its runner started?)");
        }
        LockSupport.parkNanos(WAIT_PARK_NANOS);
    }
}
