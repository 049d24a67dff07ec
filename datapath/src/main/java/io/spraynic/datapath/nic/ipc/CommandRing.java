package io.spraynic.datapath.nic.ipc;

import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;

/**
 * The {@link IpcConductor}'s side of the command ring every client writes (docs/IPC.md I4, I10.4): it reads each
 * record with its own head through an {@link UntrustedRingReader}, resets a ring that holds what no honest client
 * writes (bumping the epoch in the control memory, so waiting clients fail at once), and unblocks a claim a dead
 * producer left uncommitted, as Aeron's driver does. Conductor thread only.
 */
final class CommandRing
{
    private static final int COMMANDS_PER_CYCLE = 16;
    private static final long LOG_INTERVAL_MS = 10_000;

    private final UnsafeBuffer header;
    private final ManyToOneRingBuffer toNic;
    private final UntrustedRingReader commands;
    private final IpcCounters counters;
    private final long unblockTimeoutMs;
    private final UntrustedRingReader.Handler handler;
    private int epoch;
    private long stalledHead = -1;
    private long stalledSinceMs;

    /** @param header the control memory, whose command ring follows its header. */
    CommandRing(final UnsafeBuffer header, final IpcCounters counters, final long unblockTimeoutMs,
        final UntrustedRingReader.Handler handler)
    {
        this.header = header;
        final UnsafeBuffer ring = new UnsafeBuffer(header, IpcFileDescriptor.HEADER_LENGTH, IpcFileDescriptor.toNicLength());
        this.toNic = new ManyToOneRingBuffer(ring); // the conductor only unblocks through it; it reads with:
        this.commands = new UntrustedRingReader(ring, IpcMessages.MAX_COMMAND_LENGTH);
        this.counters = counters;
        this.unblockTimeoutMs = unblockTimeoutMs;
        this.handler = handler;
    }

    /** @return work done: commands taken (at most 16), a reset or an unblocked claim. */
    int poll(final long now)
    {
        final UntrustedRingReader commands = this.commands;
        int read = commands.checkPositions();
        if (read != UntrustedRingReader.CORRUPT)
        {
            read = commands.read(handler, COMMANDS_PER_CYCLE);
        }
        if (read == UntrustedRingReader.CORRUPT)
        {
            reset(now);
            return 1;
        }
        // a producer that died between claim and commit leaves a record nobody commits: unblock it as Aeron's driver does
        final long head = commands.head();
        if (head != stalledHead || commands.tail() <= head)
        {
            stalledHead = head;
            stalledSinceMs = now;
        }
        else if (now - stalledSinceMs > unblockTimeoutMs)
        {
            stalledSinceMs = now;
            if (toNic.unblock())
            {
                counters.commandRingUnblocks.incrementRelease();
                counters.log("unblocked a claim on the command ring left uncommitted for " + unblockTimeoutMs +
                    " ms (a client died while writing a command)", null, now, LOG_INTERVAL_MS);
                read++;
            }
        }
        return read;
    }

    /** The command ring holds what no honest client writes: start it afresh and tell waiting clients through the epoch. */
    private void reset(final long now)
    {
        final String reason = commands.corruption();
        commands.reset();
        stalledHead = commands.head();
        stalledSinceMs = now;
        header.putIntRelease(IpcFileDescriptor.COMMAND_RING_EPOCH_OFFSET, ++epoch);
        counters.commandRingResets.incrementRelease();
        counters.log("the command ring held " + reason + ": reset it (epoch " + epoch +
            "); commands in flight are lost and their clients told", null, now, LOG_INTERVAL_MS);
    }
}
