package io.spraynic.datapath.api;

import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionOpcode;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;

import java.time.Duration;

/**
 * The tools' one post/poll loop: moves a block of local memory to a peer's (RDMA WRITEs) or back (RDMA READs) over
 * any {@link Connection}, in process or across processes, in messages of a given size. Data goes on streams
 * 1..S-1 (stream 0 alone when there is one), so a spray connection spreads it; with {@code immediateLast} the last
 * WRITE carries immediate data (the message count) alone on stream 0, where it consumes the receive the peer posted
 * there, so the peer knows the block is complete. Every completion is waited for.
 * <p>
 * Application code: it blocks until done and throws {@link IllegalStateException} when a post is refused, a request
 * completes with an error, or the time runs out.
 */
public final class BulkTransfer
{
    private BulkTransfer()
    {
    }

    /**
     * Writes a whole region into the peer's memory at {@code remoteAddress}.
     *
     * @see #write(Connection, Region, long, long, long, int, int, boolean, Duration)
     */
    public static void write(final Connection connection, final Region source, final long remoteAddress, final int rkey,
        final int messageBytes, final boolean immediateLast, final Duration timeout)
    {
        write(connection, source, 0, source.length(), remoteAddress, rkey, messageBytes, immediateLast, timeout);
    }

    /**
     * Writes {@code bytes} of a region, from {@code offset}, into the peer's memory at {@code remoteAddress}.
     *
     * @param immediateLast the last WRITE carries immediate data (the number of WRITEs), alone on stream 0.
     */
    public static void write(final Connection connection, final Region source, final long offset, final long bytes,
        final long remoteAddress, final int rkey, final int messageBytes, final boolean immediateLast, final Duration timeout)
    {
        run(connection, source, offset, bytes, remoteAddress, rkey, messageBytes, false, immediateLast, timeout);
    }

    /**
     * Reads the peer's memory at {@code remoteAddress} into a whole region.
     *
     * @see #read(Connection, Region, long, long, long, int, int, Duration)
     */
    public static void read(final Connection connection, final Region into, final long remoteAddress, final int rkey,
        final int messageBytes, final Duration timeout)
    {
        read(connection, into, 0, into.length(), remoteAddress, rkey, messageBytes, timeout);
    }

    /**
     * Reads {@code bytes} of the peer's memory at {@code remoteAddress} into a region, from {@code offset}.
     */
    public static void read(final Connection connection, final Region into, final long offset, final long bytes,
        final long remoteAddress, final int rkey, final int messageBytes, final Duration timeout)
    {
        run(connection, into, offset, bytes, remoteAddress, rkey, messageBytes, true, false, timeout);
    }

    /**
     * Waits for the peer's WRITE with immediate data to consume a receive posted on the connection.
     *
     * @return its completion.
     * @throws IllegalStateException when none came in time, or it completed otherwise.
     */
    public static WorkCompletion awaitImmediate(final Connection connection, final Duration timeout)
    {
        final WorkCompletion completion = new WorkCompletion();
        final long deadline = System.nanoTime() + timeout.toNanos();
        while (!connection.receiveCompletionQueue().poll(completion))
        {
            if (System.nanoTime() >= deadline)
            {
                throw new IllegalStateException("the peer's last write did not arrive within " + timeout.toMillis() + " ms");
            }
            Thread.onSpinWait();
        }
        if (completion.status() != WorkCompletionStatus.SUCCESS ||
            completion.opcode() != WorkCompletionOpcode.RECV_RDMA_WITH_IMM)
        {
            throw new IllegalStateException("the peer's last write completed as " + completion);
        }
        return completion;
    }

    private static void run(final Connection connection, final Region local, final long offset, final long bytes,
        final long remoteAddress, final int rkey, final int messageBytes, final boolean read, final boolean immediateLast,
        final Duration timeout)
    {
        if (messageBytes < 1 || bytes < 0 || offset < 0 || offset > local.length() - bytes)
        {
            throw new IllegalArgumentException(bytes + " bytes at offset " + offset + " in messages of " + messageBytes +
                " do not fit a region of " + local.length());
        }
        final String what = read ? "read" : "write";
        final long messageCount = Math.max(1, (bytes + messageBytes - 1) / messageBytes);
        if (messageCount > Integer.MAX_VALUE)
        {
            throw new IllegalArgumentException(bytes + " bytes in messages of " + messageBytes + " are too many messages");
        }
        final int messages = (int)messageCount;
        final SendRequest request = new SendRequest();
        final WorkCompletion completion = new WorkCompletion();
        final int streams = connection.streams();
        final CompletionQueue completions = connection.sendCompletionQueue();
        int posted = 0;
        int completed = 0;
        final long deadline = System.nanoTime() + timeout.toNanos();
        while (completed < messages)
        {
            if (System.nanoTime() >= deadline)
            {
                throw new IllegalStateException("only " + completed + " of " + messages + " " + what + "s completed within " +
                    timeout.toMillis() + " ms");
            }
            if (posted < messages)
            {
                final long at = (long)posted * messageBytes;
                final int length = (int)Math.min(messageBytes, bytes - at);
                final boolean last = immediateLast && posted == messages - 1;
                request.reset().wrId(posted)
                    .opcode(read ? WorkRequestOpcode.RDMA_READ :
                        last ? WorkRequestOpcode.RDMA_WRITE_WITH_IMM : WorkRequestOpcode.RDMA_WRITE)
                    .local(local, local.address() + offset + at, length).remote(remoteAddress + at, rkey)
                    .immediate(messages);
                final int result = connection.postSend(last || streams == 1 ? 0 : 1 + posted % (streams - 1), request);
                if (result == PostResult.OK)
                {
                    posted++;
                }
                else if (result != PostResult.QUEUE_FULL)
                {
                    throw new IllegalStateException(what + " " + posted + " of " + messages + " was refused: " +
                        PostResult.name(result));
                }
            }
            while (completions.poll(completion))
            {
                if (completion.status() != WorkCompletionStatus.SUCCESS)
                {
                    final long at = completion.wrId() * messageBytes;
                    throw new IllegalStateException(what + " " + completion.wrId() + " of " + messages + " (bytes " + at +
                        ".." + (Math.min(bytes, at + messageBytes) - 1) + " at the peer's address " + (remoteAddress + at) +
                        ") failed: " + completion.status() + (completion.status() == WorkCompletionStatus.REM_ACCESS_ERR ?
                        " (the peer refused access: outside the region it registered, or not its rkey)" : ""));
                }
                completed++;
            }
        }
    }
}
