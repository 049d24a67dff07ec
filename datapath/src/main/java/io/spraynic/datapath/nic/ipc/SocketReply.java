package io.spraynic.datapath.nic.ipc;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.file.Path;
import java.util.concurrent.locks.LockSupport;

/**
 * A client's side of one exchange on the NIC's socket (docs/IPC.md I12): it sends HELLO, ADD_CLIENT or OPEN_MEMORY
 * and takes the NIC's answer from the same connection, an OK with the memory as its one descriptor (kept here for the
 * caller to map and close) or an ERROR with none (thrown as {@link NicRefusedException}). The answer is checked as
 * the NIC checks commands: its length, its version, the descriptors it carries, the correlation id; what no honest
 * NIC sends closes every descriptor it brought and fails the call.
 */
final class SocketReply
{
    /** The answer's bytes (its I6 header first). */
    final UnsafeBuffer answer;
    /** The memory that came with an OK; the caller's to close. */
    final int fd;

    private SocketReply(final UnsafeBuffer answer, final int fd)
    {
        this.answer = answer;
        this.fd = fd;
    }

    /**
     * Sends {@code length} bytes of {@code command} (its header's correlation id set by the caller, or 0) as a {@code
     * type} message of this version and waits until {@code deadlineNanos} for the answer.
     *
     * @throws NicRefusedException   when the NIC answers ERROR.
     * @throws IllegalStateException when it answers nothing, or what no honest NIC sends.
     */
    static SocketReply exchange(final int socket, final int type, final DirectBuffer command, final int length,
        final long deadlineNanos, final Path directory)
    {
        final byte[] message = new byte[CommandSocket.MESSAGE_HEADER_LENGTH + length];
        final UnsafeBuffer out = new UnsafeBuffer(message);
        out.putInt(0, type, IpcMessages.ORDER);
        out.putInt(CommandSocket.VERSION_OFFSET, IpcFileDescriptor.VERSION, IpcMessages.ORDER);
        out.putBytes(CommandSocket.MESSAGE_HEADER_LENGTH, command, 0, length);
        final long correlationId = command.getLong(IpcMessages.Header.CORRELATION_ID_OFFSET, IpcMessages.ORDER);
        final long sent = UnixSockets.send(socket, message);
        if (sent != message.length)
        {
            throw new IllegalStateException("cannot send " + IpcMessages.name(type) + " on " +
                directory.resolve(CommandSocket.SOCKET_FILE) + " (" + (sent < 0 ? "errno " + -sent : sent + " B") + ")");
        }
        final byte[] in = new byte[CommandSocket.MESSAGE_HEADER_LENGTH + IpcAnswers.Error.MAX_LENGTH];
        try (UnixSockets.Received received = new UnixSockets.Received(in.length))
        {
            while (true)
            {
                UnixSockets.receive(socket, in, received);
                if (received.length != -UnixSockets.EAGAIN && received.length != -UnixSockets.EINTR)
                {
                    break;
                }
                if (System.nanoTime() >= deadlineNanos)
                {
                    throw new IllegalStateException("the NIC serving " + directory + " did not answer " +
                        IpcMessages.name(type) + " on " + CommandSocket.SOCKET_FILE + " in time");
                }
                LockSupport.parkNanos(200_000);
            }
            return check(type, in, received, correlationId, directory);
        }
    }

    private static SocketReply check(final int type, final byte[] in, final UnixSockets.Received received,
        final long correlationId, final Path directory)
    {
        final UnsafeBuffer message = new UnsafeBuffer(in);
        final long length = received.length;
        final int answerType = length >= CommandSocket.MESSAGE_HEADER_LENGTH ? message.getInt(0, IpcMessages.ORDER) : 0;
        final int fds = answerType == IpcMessages.OK ? 1 : 0;
        String problem = null;
        if (length <= 0)
        {
            problem = "closed the connection without answering " + IpcMessages.name(type) + (length < 0 ?
                " (errno " + -length + ")" : ": a NIC of another IPC version drops what it does not know");
        }
        else if (0 != (received.flags & (UnixSockets.MSG_TRUNC | UnixSockets.MSG_CTRUNC)) ||
            0 != received.otherControlMessages || received.fdCount != fds ||
            (answerType != IpcMessages.OK && answerType != IpcMessages.ERROR) ||
            length < CommandSocket.MESSAGE_HEADER_LENGTH + (fds == 1 ? IpcAnswers.Ok.LENGTH : IpcAnswers.Error.MESSAGE_OFFSET))
        {
            problem = "answered " + IpcMessages.name(type) + " with a type " + answerType + " message of " + length +
                " B and " + received.fdCount + " descriptor(s)";
        }
        else if (message.getInt(CommandSocket.VERSION_OFFSET, IpcMessages.ORDER) != IpcFileDescriptor.VERSION)
        {
            problem = "answered in IPC version " + message.getInt(CommandSocket.VERSION_OFFSET, IpcMessages.ORDER) +
                ", this client speaks " + IpcFileDescriptor.VERSION;
        }
        else if (message.getLong(CommandSocket.MESSAGE_HEADER_LENGTH + IpcMessages.Header.CORRELATION_ID_OFFSET,
            IpcMessages.ORDER) != correlationId)
        {
            problem = "answered " + IpcMessages.name(type) + " with another correlation id";
        }
        if (null != problem)
        {
            UnixSockets.closeAll(received.fds, received.fdCount);
            throw new IllegalStateException("the NIC serving " + directory + " " + problem);
        }
        final UnsafeBuffer answer = new UnsafeBuffer(new byte[(int)length - CommandSocket.MESSAGE_HEADER_LENGTH]);
        answer.putBytes(0, message, CommandSocket.MESSAGE_HEADER_LENGTH, answer.capacity());
        if (answerType == IpcMessages.ERROR)
        {
            final IpcAnswers.Error refusal = new IpcAnswers.Error().wrap(answer, 0);
            final String reason = refusal.getBoundedString(IpcAnswers.Error.MESSAGE_OFFSET, answer.capacity(),
                IpcMessages.MAX_STRING_BYTES);
            throw new NicRefusedException(type, refusal.code(), "the NIC refused " + IpcMessages.name(type) + " (" +
                IpcMessages.errorName(refusal.code()) + "): " + (null == reason ? "(no reason it could read)" : reason));
        }
        return new SocketReply(answer, received.fds[0]);
    }
}
