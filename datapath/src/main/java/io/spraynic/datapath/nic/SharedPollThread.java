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
     * Adds {@code agents} to {@code pollThread}, waiting until its thread has started each.
     *
     * @throws IllegalStateException when the poll thread is closed, or does not run a duty cycle within {@code timeout}.
     */
    static void join(final DynamicCompositeAgent pollThread, final Agent[] agents, final Duration timeout)
    {
        final long deadline = System.nanoTime() + timeout.toNanos();
        for (final Agent agent : agents)
        {
            final String action = "add " + agent.roleName();
            // the composite refuses adds until its runner's thread started it; then another NIC's add may be under way
            while (!isRunning(pollThread, action) || !pollThread.tryAdd(agent))
            {
                pause(pollThread, deadline, action);
            }
            while (!pollThread.hasAddAgentCompleted())
            {
                isRunning(pollThread, action);
                pause(pollThread, deadline, action);
            }
        }
    }

    /**
     * Removes {@code agents} from {@code pollThread}, waiting until its thread has closed each; returns at once when
     * no thread runs it (never started, or closed: it closed its agents itself).
     *
     * @throws IllegalStateException when the poll thread runs no duty cycle within {@code timeout}: the agents may
     *                               still run, so whatever they use must stay.
     */
    static void leave(final DynamicCompositeAgent pollThread, final Agent[] agents, final Duration timeout)
    {
        final long deadline = System.nanoTime() + timeout.toNanos();
        for (final Agent agent : agents)
        {
            final String action = "remove " + agent.roleName();
            while (!tryRemove(pollThread, agent))
            {
                if (pollThread.status() != DynamicCompositeAgent.Status.ACTIVE)
                {
                    return;
                }
                pause(pollThread, deadline, action);
            }
            while (!pollThread.hasRemoveAgentCompleted())
            {
                if (pollThread.status() != DynamicCompositeAgent.Status.ACTIVE)
                {
                    return;
                }
                pause(pollThread, deadline, action);
            }
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
