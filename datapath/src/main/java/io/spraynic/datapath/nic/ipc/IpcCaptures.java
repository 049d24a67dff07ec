package io.spraynic.datapath.nic.ipc;

import io.spraynic.datapath.capture.CaptureFilter;
import io.spraynic.datapath.capture.CaptureRingLayout;
import io.spraynic.datapath.nic.CaptureSource;
import io.spraynic.datapath.nic.MemoryStillNamedException;

/**
 * The live capture an {@link IpcConductor} serves (as {@code dpdk-pdump} serves one): a client's START_CAPTURE, checked
 * field by field, makes sealed shared memory ({@link SealedMemory}) with one ring per worker and starts the NIC's capture
 * taps ({@link CaptureSource#startCapture}); the capture ends, and the NIC lets go of the memory, when the client stops
 * it, when its duration is up, when the client is released (it closed, died or was dropped) or when the NIC stops. One
 * capture at a time, over every client; refused outright when the NIC does not allow capture. Conductor thread only;
 * the NIC's actions run on a control thread.
 */
final class IpcCaptures
{
    /** Longest capture a client may ask for. */
    static final int MAX_DURATION_MS = 3_600_000;

    private final IpcConductor conductor;
    private final AnswerSender answers;
    private final CaptureSource nic;
    private final boolean allowed;
    private IpcClient owner;
    private SealedMemory memory;
    private long captureId;
    private long deadlineMs;
    private boolean starting;

    IpcCaptures(final IpcConductor conductor, final AnswerSender answers, final CaptureSource nic, final boolean allowed)
    {
        this.conductor = conductor;
        this.answers = answers;
        this.nic = nic;
        this.allowed = allowed;
    }

    void onStart(final IpcClient client, final IpcMessages.StartCapture command)
    {
        final long correlationId = command.correlationId();
        // permission first: a client that may not capture learns nothing of the NIC's ports and queues
        if (!allowed)
        {
            refuse(client, correlationId, IpcMessages.ERR_NOT_PERMITTED, "this NIC does not allow live capture (it runs " +
                "with --no-ipc-capture: its clients must not see each other's traffic)");
            return;
        }
        if (!client.mayCapture)
        {
            refuse(client, correlationId, IpcMessages.ERR_NOT_PERMITTED, "a live capture sees every tenant's frames: " +
                "only the NIC's own user or root may start one, not another user of its --ipc-group");
            return;
        }
        final String problem = problem(command);
        if (null != problem)
        {
            refuse(client, correlationId, IpcMessages.ERR_BAD_VALUE, problem);
            return;
        }
        if (null != owner || starting)
        {
            conductor.counters.refusedCaptures.incrementRelease();
            answers.respondError(client, correlationId, IpcMessages.START_CAPTURE, IpcMessages.ERR_LIMIT,
                "a capture " + (starting ? "is starting" : "of client " + owner.id + " runs") +
                ": the NIC serves one at a time, retry once it ended");
            return;
        }
        final CaptureRingLayout layout = CaptureRingLayout.ofRingBytes(nic.workers(), command.ringBytes(),
            command.snapLength(), command.sample());
        final CaptureFilter filter = filter(command);
        final long id = conductor.nextObjectId(); // one id space with connections: OPEN_MEMORY names either
        final int durationMs = command.durationMs();
        starting = true;
        conductor.submit(client, correlationId, IpcMessages.START_CAPTURE, () ->
        {
            final SealedMemory made = SealedMemory.create("spraynic-capture-" + id, layout.fileLength());
            try
            {
                final String[] names = new String[nic.planes()];
                for (int p = 0; p < names.length; p++)
                {
                    names[p] = nic.portName(p);
                }
                final long now = System.currentTimeMillis() * 1_000_000L;
                layout.writeHeader(made.memory(), ProcessHandle.current().pid(), id, names, filter.toString(), now,
                    now + durationMs * 1_000_000L);
                nic.startCapture(made.memory(), layout, filter);
                return made;
            }
            catch (final MemoryStillNamedException stillNamed)
            {
                stillNamed.unnamed().thenRun(made::close); // a worker that missed the start may write into it yet
                throw stillNamed;
            }
            catch (final RuntimeException ex)
            {
                made.close();
                throw ex;
            }
        }, (SealedMemory made) ->
        {
            if (client.released)
            {
                conductor.releaseLater(() -> stop(made)); // the client went while its capture started
                return;
            }
            owner = client;
            memory = made;
            captureId = id;
            deadlineMs = System.currentTimeMillis() + durationMs;
            conductor.counters.captures.incrementRelease();
            final IpcAnswers.CaptureReady ready = new IpcAnswers.CaptureReady();
            final int length = ready.wrap(answers.response, 0).set(id, ""); // the memory comes on OPEN_MEMORY
            ready.ids(client.id, correlationId);
            answers.answer(client, IpcMessages.CAPTURE_READY, length);
        }, () -> starting = false);
    }

    private void refuse(final IpcClient client, final long correlationId, final int code, final String why)
    {
        conductor.counters.refusedCaptures.incrementRelease();
        answers.respondError(client, correlationId, IpcMessages.START_CAPTURE, code, why);
    }

    /** @return null when every field of the command is allowed on this NIC, else the first that is not and why. */
    private String problem(final IpcMessages.StartCapture command)
    {
        final int durationMs = command.durationMs();
        if (durationMs < 1 || durationMs > MAX_DURATION_MS)
        {
            return "a capture of " + durationMs + " ms is not in 1.." + MAX_DURATION_MS;
        }
        if (command.reserved() != 0)
        {
            return "the reserved word at " + IpcMessages.StartCapture.RESERVED_OFFSET + " is " + command.reserved() +
                ", not 0 (it held the ring's slots before rings were sized in bytes)";
        }
        final String layout = CaptureRingLayout.ringBytesProblem(nic.workers(), command.ringBytes(), command.snapLength(),
            command.sample());
        if (null != layout)
        {
            return layout;
        }
        if (command.kind() < 0 || command.kind() >= CaptureFilter.Kind.values().length)
        {
            return "frame kind " + command.kind() + " is not one of 0.." + (CaptureFilter.Kind.values().length - 1);
        }
        if (command.hasHost() != 0 && command.hasHost() != 1)
        {
            return "has-host " + command.hasHost() + " is neither 0 nor 1";
        }
        try
        {
            return filter(command).problem(nic.planes(), nic.queues());
        }
        catch (final IllegalArgumentException ex)
        {
            return ex.getMessage();
        }
    }

    private static CaptureFilter filter(final IpcMessages.StartCapture command)
    {
        return new CaptureFilter(command.directions(), command.ports(), command.queues(),
            CaptureFilter.Kind.values()[command.kind()], command.udpDstPort(), command.host(), command.hasHost() == 1);
    }

    /** @return the memory of {@code client}'s running capture {@code id}, else null. */
    SealedMemory memoryOf(final IpcClient client, final long id)
    {
        return owner == client && captureId == id ? memory : null;
    }

    void onStop(final IpcClient client, final IpcMessages.ObjectCommand command)
    {
        final long correlationId = command.correlationId();
        if (owner != client || captureId != command.objectId())
        {
            answers.refuseUnknownObject(client, correlationId, IpcMessages.STOP_CAPTURE, "capture", command.objectId());
            return;
        }
        final SealedMemory stopping = memory;
        if (conductor.submit(client, correlationId, IpcMessages.STOP_CAPTURE, () ->
        {
            if (!stop(stopping))
            {
                // OK means no worker writes into it any more: not said of a stop a worker did not confirm
                throw new IllegalStateException("the capture is over, but a worker did not confirm in time that it " +
                    "stopped writing into its memory");
            }
            return stopping;
        }, (SealedMemory done) -> answers.respondOk(client, correlationId, command.objectId()), null))
        {
            end(); // only once a control thread took the stop: refused for a busy NIC, the capture stays the client's
        }
    }

    /** The client is gone: its capture ends. */
    void onReleased(final IpcClient client)
    {
        if (owner == client)
        {
            final SealedMemory stopping = end();
            conductor.releaseLater(() -> stop(stopping));
        }
    }

    /** @return 1 when the running capture's duration was up and it ended, else 0. */
    int endExpired(final long nowMs)
    {
        if (null == owner || nowMs < deadlineMs)
        {
            return 0;
        }
        final SealedMemory stopping = end();
        conductor.releaseLater(() -> stop(stopping));
        return 1;
    }

    /** The NIC stops serving: the capture ends here and now. */
    void close()
    {
        if (null != owner)
        {
            stop(end());
        }
    }

    private SealedMemory end()
    {
        final SealedMemory stopping = memory;
        owner = null;
        memory = null;
        conductor.counters.capturesEnded.incrementRelease();
        return stopping;
    }

    /**
     * Control thread: the workers stop writing, then the NIC's mapping and descriptor go (the client keeps its own).
     *
     * @return false when a worker did not confirm in time: the memory goes once it has.
     */
    private boolean stop(final SealedMemory stopping)
    {
        try
        {
            nic.stopCapture();
        }
        catch (final MemoryStillNamedException notConfirmed)
        {
            // a worker did not confirm that it stopped writing: the mapping stays until it has (for good if it never
            // does); the NIC may start another capture meanwhile
            System.err.println("spraynic ipc: stopping a capture was not confirmed, its memory stays mapped until it " +
                "is: " + notConfirmed.getMessage());
            notConfirmed.unnamed().thenRun(stopping::close);
            return false;
        }
        catch (final RuntimeException notConfirmed)
        {
            // a capture source that cannot tell when its threads stopped (classify mode's poll threads): the mapping
            // stays for good, a leak rather than a write into freed memory
            System.err.println("spraynic ipc: stopping a capture failed, its memory stays mapped: " +
                notConfirmed.getMessage());
            return false;
        }
        stopping.close();
        return true;
    }
}
