package io.spraynic.datapath.nic.ipc;

import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.broadcast.BroadcastReceiver;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RecordDescriptor;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

/**
 * A NIC's control memory as a hostile process sees it: asked for with HELLO on the socket like any client does,
 * mapped read-write, commands written in any name, record headers written by hand, claims left uncommitted.
 */
final class RawControlFile implements AutoCloseable
{
    private final Arena arena = Arena.ofShared();
    final MemorySegment mapped;
    final UnsafeBuffer header;
    final UnsafeBuffer ring;
    final ManyToOneRingBuffer toNic;
    final BroadcastReceiver broadcast;
    final int capacity;
    private final UnsafeBuffer command = new UnsafeBuffer(new byte[IpcMessages.MAX_COMMAND_LENGTH]);

    RawControlFile(final Path directory)
    {
        final int socket = UnixSockets.connect(directory.resolve(CommandSocket.SOCKET_FILE).toString());
        if (socket < 0)
        {
            throw new IllegalStateException("no NIC socket in " + directory + ": errno " + -socket);
        }
        try
        {
            final SocketReply hello = SocketReply.exchange(socket, IpcMessages.HELLO,
                new UnsafeBuffer(new byte[IpcMessages.Header.LENGTH]), IpcMessages.Header.LENGTH,
                System.nanoTime() + 5_000_000_000L, directory);
            mapped = SealedMemory.mapChecked(hello.fd, IpcFileDescriptor.fileLength(), arena, "control memory");
            UnixSockets.close(hello.fd);
        }
        finally
        {
            UnixSockets.close(socket);
        }
        header = new UnsafeBuffer(mapped.address(), IpcFileDescriptor.fileLength());
        ring = new UnsafeBuffer(header, IpcFileDescriptor.HEADER_LENGTH, IpcFileDescriptor.toNicLength());
        toNic = new ManyToOneRingBuffer(ring);
        capacity = toNic.capacity();
        broadcast = new BroadcastReceiver(new UnsafeBuffer(header,
            IpcFileDescriptor.HEADER_LENGTH + IpcFileDescriptor.toNicLength(), IpcFileDescriptor.toClientsLength()));
    }

    int epoch()
    {
        return header.getIntVolatile(IpcFileDescriptor.COMMAND_RING_EPOCH_OFFSET);
    }

    long heartbeat()
    {
        return header.getLongVolatile(IpcFileDescriptor.HEARTBEAT_OFFSET);
    }

    long tail()
    {
        return ring.getLongVolatile(capacity + RingBufferDescriptor.TAIL_POSITION_OFFSET);
    }

    /** Writes an object command (DEREGISTER, CLOSE_CONNECTION) in any client's name with any token. */
    boolean objectCommand(final int type, final long clientId, final long token, final long objectId)
    {
        final IpcMessages.ObjectCommand c = new IpcMessages.ObjectCommand().wrap(command, 0);
        c.ids(clientId, toNic.nextCorrelationId(), token);
        c.object(objectId, 0);
        return toNic.write(type, command, 0, IpcMessages.ObjectCommand.LENGTH);
    }

    /** Writes a CONNECT that names the peer on plane 0 of 1 by any IPv4 and IPv6 address, in any client's name. */
    boolean connect(final long clientId, final long token, final int ipv4, final long ipv6High, final long ipv6Low)
    {
        command.setMemory(0, command.capacity(), (byte)0);
        final IpcMessages.Connect c = new IpcMessages.Connect().wrap(command, 0);
        c.ids(clientId, toNic.nextCorrelationId(), token);
        c.timeoutMs(1000).planes(1).peer(0, ipv4, ipv6High, ipv6Low);
        return toNic.write(IpcMessages.CONNECT, command, 0, IpcMessages.Connect.LENGTH);
    }

    /** Writes a valid START_CAPTURE of every frame for 10 s (64 slots of 128 B) in any client's name with any token. */
    boolean startCapture(final long clientId, final long token)
    {
        command.setMemory(0, command.capacity(), (byte)0);
        final IpcMessages.StartCapture c = new IpcMessages.StartCapture().wrap(command, 0);
        c.ids(clientId, toNic.nextCorrelationId(), token);
        final io.spraynic.datapath.capture.CaptureFilter all = io.spraynic.datapath.capture.CaptureFilter.ALL;
        c.set(10_000, 128, all.directions(), all.ports(), all.queues(), all.kind().ordinal(), all.udpDstPort(), all.host(),
            all.hasHost(), 1, io.spraynic.datapath.capture.CaptureRingLayout.ringBytes(64, 128));
        return toNic.write(IpcMessages.START_CAPTURE, command, 0, IpcMessages.StartCapture.LENGTH);
    }

    /** Writes a command of any type and length (the body zero) in any client's name with any token. */
    boolean command(final int type, final long clientId, final long token, final int length)
    {
        command.setMemory(0, command.capacity(), (byte)0);
        if (length >= IpcMessages.Header.LENGTH)
        {
            new IpcMessages.Header().wrap(command, 0).ids(clientId, toNic.nextCorrelationId(), token);
        }
        return toNic.write(type, command, 0, length);
    }

    /** Writes an ADD_CLIENT on the command ring, as a version-4 client would (version 5 takes it on the socket only). */
    boolean addClientOnRing()
    {
        final IpcMessages.AddClient add = new IpcMessages.AddClient().wrap(command, 0);
        add.ids(0, toNic.nextCorrelationId(), 0);
        add.pid(ProcessHandle.current().pid());
        return toNic.write(IpcMessages.ADD_CLIENT, command, 0, IpcMessages.AddClient.LENGTH);
    }

    /** Writes a record header of {@code length} where the next record goes, as a producer gone mad. */
    void corruptNextRecord(final int length)
    {
        // claimed first, so that the record is this process's: written at the tail unclaimed, a client's keepalive
        // that claimed the same place before the NIC read it overwrote the length (a CI run's reset never came)
        final int index = toNic.tryClaim(IpcMessages.REGISTER, IpcMessages.Header.LENGTH) -
            RecordDescriptor.HEADER_LENGTH;
        ring.putIntRelease(index, length);
    }

    /** @return the index of a KEEPALIVE claimed and never committed, as a producer killed between claim and commit. */
    int claimAndAbandon()
    {
        return toNic.tryClaim(IpcMessages.KEEPALIVE, IpcMessages.Header.LENGTH);
    }

    public void close()
    {
        arena.close();
    }
}
