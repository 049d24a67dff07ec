package io.spraynic.datapath.nic.ipc;

import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.broadcast.BroadcastBufferDescriptor;
import org.agrona.concurrent.broadcast.BroadcastTransmitter;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A client's command path against a NIC that plays the attacker, or a co-client that writes the shared control memory
 * (docs/IPC.md I10.8): the control memory and answer ring are made here, and this test writes what a hostile writer
 * would. No NIC process.
 */
class ClientCommandChannelTest
{
    private static final long CLIENT_ID = 7;
    private static final long TOKEN = 0x5EC2E7L;

    private final Arena arena = Arena.ofShared();
    private MemorySegment control;
    private UnsafeBuffer header;
    private ManyToOneRingBuffer toNic;
    private BroadcastTransmitter toClients;
    private OneToOneRingBuffer answers;
    private ClientCommandChannel channel;

    @BeforeEach
    void setUp()
    {
        control = arena.allocate(IpcFileDescriptor.fileLength(), 4096);
        header = new UnsafeBuffer(control.address(), (int)control.byteSize());
        header.putInt(IpcFileDescriptor.MAGIC_OFFSET, IpcFileDescriptor.MAGIC, IpcMessages.ORDER);
        header.putInt(IpcFileDescriptor.VERSION_OFFSET, IpcFileDescriptor.VERSION, IpcMessages.ORDER);
        header.putLong(IpcFileDescriptor.PID_OFFSET, 4242, IpcMessages.ORDER);
        header.putInt(IpcFileDescriptor.TO_NIC_LENGTH_OFFSET, IpcFileDescriptor.toNicLength(), IpcMessages.ORDER);
        header.putInt(IpcFileDescriptor.TO_CLIENTS_LENGTH_OFFSET, IpcFileDescriptor.toClientsLength(), IpcMessages.ORDER);
        header.putLongVolatile(IpcFileDescriptor.HEARTBEAT_OFFSET, Long.MAX_VALUE / 2); // beats for ever
        toNic = new ManyToOneRingBuffer(new UnsafeBuffer(header, IpcFileDescriptor.HEADER_LENGTH,
            IpcFileDescriptor.toNicLength()));
        toClients = new BroadcastTransmitter(new UnsafeBuffer(header, IpcFileDescriptor.HEADER_LENGTH +
            IpcFileDescriptor.toNicLength(), IpcFileDescriptor.toClientsLength()));
        final MemorySegment answerMemory = arena.allocate(IpcFileDescriptor.answerFileLength(), 4096);
        answers = new OneToOneRingBuffer(new UnsafeBuffer(answerMemory.address(), (int)answerMemory.byteSize()));
        final UnsafeBuffer added = new UnsafeBuffer(new byte[IpcAnswers.Ok.LENGTH]);
        final IpcAnswers.Ok ok = new IpcAnswers.Ok().wrap(added, 0);
        ok.ids(CLIENT_ID, 0, TOKEN);
        ok.value(60_000);
        channel = new ClientCommandChannel(Path.of("/nonexistent/ipc"), control, answerMemory, ok);
    }

    @AfterEach
    void tearDown()
    {
        channel.close();
        arena.close();
    }

    /** @return the correlation id of the first command the client wrote (keepalives, of id 0, skipped). */
    private long awaitCommand()
    {
        final long[] correlation = {-1};
        while (correlation[0] < 0)
        {
            toNic.read((type, buffer, index, length) ->
            {
                final long id = buffer.getLong(index + IpcMessages.Header.CORRELATION_ID_OFFSET, IpcMessages.ORDER);
                if (type != IpcMessages.KEEPALIVE && correlation[0] < 0)
                {
                    correlation[0] = id;
                }
            });
            Thread.onSpinWait();
        }
        return correlation[0];
    }

    private void answer(final int type, final long correlationId, final long value)
    {
        final UnsafeBuffer record = new UnsafeBuffer(new byte[IpcAnswers.Ok.LENGTH]);
        final IpcAnswers.Ok ok = new IpcAnswers.Ok().wrap(record, 0);
        ok.ids(CLIENT_ID, correlationId, 0);
        ok.value(value);
        assertTrue(answers.write(type, record, 0, IpcAnswers.Ok.LENGTH));
    }

    private long send(final Duration timeout)
    {
        return channel.send(IpcMessages.KEEPALIVE + 1000, IpcMessages.Header.LENGTH, timeout, -1);
    }

    @Test
    void shouldTakeTheAnswerOfItsOwnCommand() throws Exception
    {
        final Thread nic = new Thread(() -> answer(IpcMessages.OK, awaitCommand(), 99));
        nic.start();
        assertEquals(99, send(Duration.ofSeconds(5)));
        nic.join();
    }

    /**
     * A co-client rewinds the command ring's shared correlation counter to an id whose answer the NIC already wrote
     * (a call that failed): before, the client's next call drew that id and took the stale answer as its own (a
     * connection to another peer, say). Its ids are its own now: the stale answer is skipped and the call times out.
     */
    @Test
    void shouldNotTakeAStaleAnswerForTheCorrelationIdACoClientRewoundTheSharedCounterTo()
    {
        final long stale = 41;
        answer(IpcMessages.OK, stale, 666);
        header.putLongVolatile(IpcFileDescriptor.HEADER_LENGTH + IpcFileDescriptor.toNicLength() -
            org.agrona.concurrent.ringbuffer.RingBufferDescriptor.TRAILER_LENGTH +
            org.agrona.concurrent.ringbuffer.RingBufferDescriptor.CORRELATION_COUNTER_OFFSET, stale);
        final IllegalStateException late = assertThrows(IllegalStateException.class, () -> send(Duration.ofMillis(300)));
        assertTrue(late.getMessage().contains("did not answer"), late.getMessage());
    }

    /**
     * A co-client that sets the broadcast's tail far ahead of one record it wrote makes every receive find that record
     * again, as a lap (or, racing a real NIC, keeps writing into it): the wait had work on every pass, and the deadline
     * was only checked on idle ones, so the call never ended. It ends at its deadline now.
     */
    @Test
    void shouldEndACallAtItsDeadlineWhileTheBroadcastNeverRunsDry()
    {
        final UnsafeBuffer broadcast = new UnsafeBuffer(header, IpcFileDescriptor.HEADER_LENGTH +
            IpcFileDescriptor.toNicLength(), IpcFileDescriptor.toClientsLength());
        final int capacity = broadcast.capacity() - BroadcastBufferDescriptor.TRAILER_LENGTH;
        toClients.transmit(IpcMessages.OK, new UnsafeBuffer(new byte[8]), 0, 8); // a record at offset 0
        final long farAhead = (long)capacity << 20;
        broadcast.putLongVolatile(capacity + BroadcastBufferDescriptor.LATEST_COUNTER_OFFSET, farAhead);
        // a tail two laps past the latest record: each receive is a lap, back to that record
        broadcast.putLongVolatile(capacity + BroadcastBufferDescriptor.TAIL_INTENT_COUNTER_OFFSET, farAhead + 2L * capacity);
        broadcast.putLongVolatile(capacity + BroadcastBufferDescriptor.TAIL_COUNTER_OFFSET, farAhead + 2L * capacity);
        assertTimeoutPreemptively(Duration.ofSeconds(10), () ->
        {
            final IllegalStateException late = assertThrows(IllegalStateException.class,
                () -> send(Duration.ofMillis(200)));
            assertTrue(late.getMessage().contains("did not answer"), late.getMessage());
        });
    }

    /**
     * A broadcast record whose length a co-client set past the buffer's end: the wait reads it as a refusal may be
     * lost (the deadline tells), never with an exception of the receiver's out of the call.
     */
    @Test
    void shouldEndACallAtItsDeadlineWhenTheBroadcastHoldsARecordOfNoLength()
    {
        final UnsafeBuffer broadcast = new UnsafeBuffer(header, IpcFileDescriptor.HEADER_LENGTH +
            IpcFileDescriptor.toNicLength(), IpcFileDescriptor.toClientsLength());
        toClients.transmit(IpcMessages.ERROR, new UnsafeBuffer(new byte[64]), 0, 64);
        for (final int length : new int[]{0x7FFF_FFF0, -8, 0, 4})
        {
            broadcast.putInt(0, length); // the record's length, as the receiver copies it
            final IllegalStateException late = assertThrows(IllegalStateException.class,
                () -> send(Duration.ofMillis(100)), "length " + length);
            assertTrue(late.getMessage().contains("did not answer"), late.getMessage());
        }
    }

    /** A refusal whose reason claims 2 GiB: a NicRefusedException that says so, not an IndexOutOfBoundsException. */
    @Test
    void shouldRefuseWithACorruptReasonLengthAsARefusal() throws Exception
    {
        final Thread nic = new Thread(() ->
        {
            final long correlationId = awaitCommand();
            final UnsafeBuffer record = new UnsafeBuffer(new byte[IpcAnswers.Error.MAX_LENGTH]);
            final IpcAnswers.Error error = new IpcAnswers.Error().wrap(record, 0);
            final int length = error.set(IpcMessages.KEEPALIVE + 1000, IpcMessages.ERR_LIMIT, "no");
            error.ids(CLIENT_ID, correlationId, 0);
            record.putInt(IpcAnswers.Error.MESSAGE_OFFSET, Integer.MAX_VALUE, IpcMessages.ORDER);
            answers.write(IpcMessages.ERROR, record, 0, length);
        });
        nic.start();
        final NicRefusedException refused = assertThrows(NicRefusedException.class, () -> send(Duration.ofSeconds(5)));
        assertEquals(IpcMessages.ERR_LIMIT, refused.code());
        assertTrue(refused.getMessage().contains("(its reason's length is corrupt)"), refused.getMessage());
        nic.join();
    }

    /** An answer ring with a record no NIC writes fails the call with a reason, not an exception of Agrona's. */
    @Test
    void shouldFailACallWhoseAnswerRingIsCorrupt()
    {
        answers.buffer().putInt(0, 0x7FFF_FFF9); // a record length past the ring's end, at the head
        final IllegalStateException corrupt = assertThrows(IllegalStateException.class, () -> send(Duration.ofSeconds(5)));
        assertTrue(corrupt.getMessage().contains("into this client's answer ring"), corrupt.getMessage());
    }
}
