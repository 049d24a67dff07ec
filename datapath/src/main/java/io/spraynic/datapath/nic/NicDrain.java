package io.spraynic.datapath.nic;

import io.spraynic.datapath.api.DrainReport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Draining an {@link EmbeddedNic}: closing one connection once what was posted on it is done (S9.2 on the wire for
 * spray), waiting for every worker to go idle before the NIC stops, and reporting what was still in flight.
 */
final class NicDrain
{
    private final WorkerCalls calls;
    private final ConnectionRegistry registry;

    NicDrain(final WorkerCalls calls, final ConnectionRegistry registry)
    {
        this.calls = calls;
        this.registry = registry;
    }

    /** See {@link NicConnection#close}. */
    DrainReport.ConnectionDrain closeConnection(final NicConnection c, final Duration timeout)
    {
        final NicWorker worker = calls.worker(c.worker());
        final long deadline = System.nanoTime() + timeout.toNanos();
        DrainReport.ConnectionDrain drain = connectionDrain(worker, c);
        while ((drain.waiting() > 0 || !drain.idle()) && System.nanoTime() < deadline)
        {
            WorkerCalls.sleepBriefly();
            drain = connectionDrain(worker, c);
        }
        if (c instanceof SprayNicConnection s && null != s.spray())
        {
            // S9.2: CLOSE on the wire once this end's messages are done; the peer answers and forgets it too
            boolean closed = !WorkerCalls.call(worker, (w, now) ->
                ((SprayWorkerTransport)w.transport()).engine().close(s.spray(), now), EmbeddedNic.CONTROL_TIMEOUT,
                "close a connection");
            while (!closed && System.nanoTime() < deadline)
            {
                WorkerCalls.sleepBriefly();
                closed = WorkerCalls.call(worker, (w, now) -> s.spray().isClosed(), EmbeddedNic.CONTROL_TIMEOUT,
                    "close a connection");
            }
        }
        WorkerCalls.call(worker, (w, now) ->
        {
            w.detach(c);
            c.destroy(w.transport());
            return c;
        }, EmbeddedNic.CONTROL_TIMEOUT, "close a connection");
        registry.release(c);
        return drain;
    }

    /**
     * Waits until every worker is idle (nothing posted waits, nothing is in flight) or the deadline passes.
     *
     * @return true when every worker went idle.
     */
    boolean awaitIdle(final long deadlineNanos)
    {
        while (true)
        {
            boolean drained = true;
            for (final NicWorker worker : calls.workers())
            {
                final Boolean idle = WorkerCalls.tryAwait(WorkerCalls.submit(worker, (w, now) -> w.computeIdle()));
                drained &= Boolean.TRUE.equals(idle);
            }
            if (drained || System.nanoTime() >= deadlineNanos)
            {
                return drained;
            }
            WorkerCalls.sleepBriefly();
        }
    }

    /**
     * Once the workers stopped (their state is ours to read): describes every open connection and frees its counters.
     *
     * @return what each connection still had in flight.
     */
    List<DrainReport.ConnectionDrain> releaseAll()
    {
        final List<DrainReport.ConnectionDrain> drains = new ArrayList<>();
        for (final NicConnection c : registry.open())
        {
            drains.add(describe(c));
            registry.release(c);
        }
        return drains;
    }

    private static DrainReport.ConnectionDrain connectionDrain(final NicWorker worker, final NicConnection c)
    {
        return WorkerCalls.call(worker, (w, now) -> describe(c), EmbeddedNic.CONTROL_TIMEOUT, "check a connection");
    }

    static DrainReport.ConnectionDrain describe(final NicConnection c)
    {
        return new DrainReport.ConnectionDrain(c.kind().name().toLowerCase() + " 0x" + Integer.toHexString(c.localId) +
            " on worker " + c.worker(), c.postedSends(), c.postedReceives(), c.requests.size(), NicWorker.isIdle(c));
    }
}
