package io.spraynic.datapath.nic.ipc;

import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class UntrustedRingReaderTest
{
    private static final int CAPACITY = 1024;
    private static final int MAX = 64;

    private final UnsafeBuffer buffer = new UnsafeBuffer(ByteBuffer.allocateDirect(CAPACITY + RingBufferDescriptor.TRAILER_LENGTH));
    private final ManyToOneRingBuffer producers = new ManyToOneRingBuffer(buffer);
    private final UntrustedRingReader reader = new UntrustedRingReader(buffer, MAX);
    private final UnsafeBuffer message = new UnsafeBuffer(new byte[MAX]);
    private final List<Long> seen = new ArrayList<>();
    private final UntrustedRingReader.Handler collect = (type, record, length) ->
    {
        seen.add(record.getLong(0));
        return true;
    };

    private void write(final long value)
    {
        message.putLong(0, value);
        assertTrue(producers.write(7, message, 0, 48));
    }

    @Test
    void shouldPeekTheSameRecordUntilConsumedFromACopyTheProducerCannotChange()
    {
        write(41);
        write(42);
        assertEquals(7, reader.peek());
        assertEquals(48, reader.recordLength());
        final int at = org.agrona.concurrent.ringbuffer.RecordDescriptor.encodedMsgOffset(0);
        buffer.putLong(at, 666); // the producer rewrites the record after the reader checked it
        assertEquals(41, reader.record().getLong(0), "the reader's copy, not the shared bytes");
        assertEquals(7, reader.peek(), "not consumed: offered again, copied afresh");
        assertEquals(666, reader.record().getLong(0));
        reader.consume();
        assertEquals(0, buffer.getInt(0), "a consumed record is zeroed, as producers expect");
        assertEquals(7, reader.peek());
        assertEquals(42, reader.record().getLong(0));
        reader.consume();
        assertEquals(0, reader.peek());
        assertEquals(reader.head(), buffer.getLongVolatile(CAPACITY + RingBufferDescriptor.HEAD_POSITION_OFFSET),
            "the shared head follows each consume");
    }

    @Test
    void shouldReadWhatAgronaProducersWriteAcrossManyWrapsInOrder()
    {
        long next = 0;
        for (int round = 0; round < 200; round++)
        {
            for (int i = 0; i < 5; i++)
            {
                write(next + i);
            }
            assertEquals(5, reader.read(collect, 100));
            next += 5;
            assertEquals(0, reader.checkPositions());
        }
        assertEquals(1000, seen.size());
        for (int i = 0; i < seen.size(); i++)
        {
            assertEquals(i, seen.get(i));
        }
        assertEquals(reader.head(), buffer.getLong(CAPACITY + RingBufferDescriptor.HEAD_POSITION_OFFSET));
    }

    @Test
    void shouldReadAOneToOneRingToo()
    {
        final OneToOneRingBuffer one = new OneToOneRingBuffer(buffer);
        for (int i = 0; i < 100; i++)
        {
            message.putLong(0, i);
            assertTrue(one.write(3, message, 0, 56));
            assertEquals(1, reader.read(collect, 10));
        }
        assertEquals(100, seen.size());
        assertEquals(99L, seen.get(99));
    }

    @ParameterizedTest
    @ValueSource(ints = {0x7FFF_FFFF, 4, 7, CAPACITY + 8, -0x7FFF_FFFF, Integer.MIN_VALUE, -4, -(CAPACITY + 8)})
    void shouldAnswerCorruptForARecordLengthNoProducerWritesAndConsumeNothing(final int length)
    {
        write(1);
        assertEquals(1, reader.read(collect, 10));
        final int index = (int)reader.head() & (CAPACITY - 1);
        buffer.putInt(index, length);
        buffer.putInt(index + 4, 7);
        for (int i = 0; i < 3; i++)
        {
            assertEquals(UntrustedRingReader.CORRUPT, reader.read(collect, 10), "every time, and never throws");
        }
        assertTrue(reader.corruption().contains("at " + index), reader.corruption());
        assertEquals(1, seen.size());
    }

    @Test
    void shouldAnswerCorruptForARecordLongerThanAnyMessageOrOfABadType()
    {
        buffer.putInt(0, 8 + MAX + 8);
        buffer.putInt(4, 7);
        assertEquals(UntrustedRingReader.CORRUPT, reader.read(collect, 10));
        assertTrue(reader.corruption().contains("longer than the " + MAX + " B"), reader.corruption());
        buffer.putInt(0, 16);
        buffer.putInt(4, 0);
        assertEquals(UntrustedRingReader.CORRUPT, reader.read(collect, 10));
        assertTrue(reader.corruption().contains("type 0"), reader.corruption());
        buffer.putInt(4, -5);
        assertEquals(UntrustedRingReader.CORRUPT, reader.read(collect, 10));
    }

    @Test
    void shouldHandACopySoTheProducerCannotChangeARecordBetweenCheckAndUse()
    {
        write(42);
        final int[] changed = {0};
        assertEquals(1, reader.read((type, record, length) ->
        {
            buffer.putLong(8, 666); // the producer rewrites the record in shared memory while the handler runs
            changed[0] = (int)record.getLong(0);
            return true;
        }, 10));
        assertEquals(42, changed[0]);
    }

    @Test
    void shouldLeaveARecordTheHandlerDeclinesForTheNextRead()
    {
        write(5);
        write(6);
        assertEquals(0, reader.read((type, record, length) -> false, 10));
        assertEquals(2, reader.read(collect, 10));
        assertEquals(List.of(5L, 6L), seen);
    }

    @Test
    void shouldIgnoreASharedHeadPositionSomeoneOverwrote()
    {
        write(1);
        buffer.putLong(CAPACITY + RingBufferDescriptor.HEAD_POSITION_OFFSET, 12345);
        assertEquals(1, reader.read(collect, 10));
        assertEquals(List.of(1L), seen);
        buffer.putLong(CAPACITY + RingBufferDescriptor.HEAD_POSITION_OFFSET, -8);
        assertEquals(0, reader.checkPositions());
        assertEquals(reader.head(), buffer.getLong(CAPACITY + RingBufferDescriptor.HEAD_POSITION_OFFSET),
            "the shared head written back for the producers");
    }

    @Test
    void shouldFindATailBehindTheHeadOrTooFarAheadAndStartAfreshAfterAReset()
    {
        write(1);
        assertEquals(0, reader.checkPositions());
        buffer.putLong(CAPACITY + RingBufferDescriptor.TAIL_POSITION_OFFSET, -64);
        assertEquals(UntrustedRingReader.CORRUPT, reader.checkPositions());
        buffer.putLong(CAPACITY + RingBufferDescriptor.TAIL_POSITION_OFFSET, CAPACITY + 64);
        assertEquals(UntrustedRingReader.CORRUPT, reader.checkPositions());

        reader.reset();
        assertEquals(0, reader.checkPositions());
        assertEquals(CAPACITY, reader.head());
        assertEquals(0, reader.read(collect, 10), "the reset discarded what was there");
        for (int i = 0; i < 50; i++)
        {
            write(100 + i);
            assertEquals(1, reader.read(collect, 10));
        }
        assertEquals(50, seen.size());
        assertEquals(149L, seen.get(49));
    }

    @Test
    void shouldStopAtAClaimNotYetCommittedAndReadOnAfterAgronaUnblocksIt()
    {
        write(1);
        final int claimed = producers.tryClaim(7, 48); // a producer that dies before commit
        assertTrue(claimed > 0);
        write(2);
        assertEquals(1, reader.read(collect, 10));
        assertEquals(0, reader.read(collect, 10), "stalled behind the claim");
        assertTrue(producers.unblock());
        assertEquals(1, reader.read(collect, 10));
        assertEquals(List.of(1L, 2L), seen);
    }
}
