package io.spraynic.datapath.transport.spray;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static io.spraynic.datapath.transport.spray.InboundMessageRecords.MISSING;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The record table of inbound messages: records found by (stream, MSN), the last lookup answered again only while
 * the table has not changed, the window and reserve of S10.2 counted, the per-record state moved as the message
 * layer moves it, and the pooled arrays attached and given back whole.
 */
@Timeout(30)
class InboundMessageRecordsTest
{
    private static InboundMessageRecords attached(final int capacity)
    {
        final InboundMessageRecords records = new InboundMessageRecords(capacity);
        records.attach(new InboundMessageRecords.Storage(capacity));
        return records;
    }

    private static int open(final InboundMessageRecords records, final int stream, final int msn, final boolean reserve)
    {
        return records.open(SendSlots.key(stream, msn), reserve, MessageKinds.WRITE, stream, msn, 3000, 3, 7, 0,
            0x1234L);
    }

    /**
     * A record taken again starts with no immediate: a SEND with immediate refused before its immediate is read
     * (too long for its receive, S9.3) completes its receive with none, not with the immediate of the message that
     * held the record before.
     */
    @Test
    void shouldOpenARecordWithoutTheImmediateOfItsLastMessage()
    {
        final InboundMessageRecords records = attached(1);
        final int first = open(records, 0, 5, false);
        records.immediate(first, 1016);
        records.close(SendSlots.key(0, 5), first);
        final int second = open(records, 0, 6, false);
        assertEquals(first, second, "the one record, taken again");
        assertEquals(0, records.immediate(second));
    }

    /**
     * Property: over random opens, closes and lookups, with hostile keys (any stream of 16 bits, any MSN, keys of
     * closed records, the same key twice in a row across a change), the cached lookup answers exactly what the map
     * and a model of it answer.
     */
    @Test
    void shouldAnswerEveryLookupAsTheMapDoes()
    {
        final SplittableRandom random = new SplittableRandom(13);
        for (int trial = 0; trial < 50; trial++)
        {
            final int capacity = 1 + random.nextInt(64);
            final InboundMessageRecords records = attached(capacity);
            final Map<Long, Integer> model = new HashMap<>();
            final List<Long> keys = new ArrayList<>();
            long lastKey = SendSlots.key(0, 0);
            for (int step = 0; step < 5_000; step++)
            {
                final int action = random.nextInt(10);
                final long key;
                if (action < 3 && model.size() < capacity)
                {
                    final int stream = random.nextInt(4);
                    final int msn = random.nextInt();
                    key = SendSlots.key(stream, msn);
                    if (!model.containsKey(key))
                    {
                        final int record = open(records, stream, msn, false);
                        assertFalse(model.containsValue(record), "a record in use is not handed out again");
                        model.put(key, record);
                        keys.add(key);
                        assertEquals(stream, records.stream(record));
                        assertEquals(msn, records.msn(record));
                    }
                }
                else if (action < 5 && !model.isEmpty())
                {
                    key = keys.remove(random.nextInt(keys.size()));
                    records.close(key, model.remove(key));
                }
                else
                {
                    // a lookup: the last key again (the cache), a key in use, one closed, or a hostile one
                    final int pick = random.nextInt(4);
                    key = pick == 0 ? lastKey : pick == 1 && !keys.isEmpty() ? keys.get(random.nextInt(keys.size())) :
                        SendSlots.key(random.nextInt(1 << 16), random.nextInt());
                }
                final long probe = random.nextInt(3) == 0 ? lastKey : key;
                final int expected = model.getOrDefault(probe, MISSING);
                assertEquals(expected, records.recordOf(probe), "trial " + trial + " step " + step);
                assertEquals(expected, records.recordOf(probe), "asked again");
                if (!records.isEmpty())
                {
                    assertEquals(expected, records.lookUp(probe));
                }
                assertEquals(model.size(), records.inUse());
                assertEquals(model.isEmpty(), records.isEmpty());
                lastKey = key;
            }
        }
    }

    @Test
    void shouldCountTheWindowAndTheReserve()
    {
        final InboundMessageRecords records = attached(8); // 7 in the window, 1 in reserve (S10.2)
        for (int msn = 0; msn < 7; msn++)
        {
            assertTrue(records.hasRoom());
            open(records, 0, msn, false);
        }
        assertFalse(records.hasRoom(), "the window is full");
        assertTrue(records.hasRoomToRefuse(), "the reserve can hold a refusal");
        final int refused = open(records, 0, 7, true);
        assertTrue(records.isFromReserve(refused));
        assertFalse(records.hasRoomToRefuse(), "window and reserve full");

        records.close(SendSlots.key(0, 0), records.recordOf(SendSlots.key(0, 0)));
        assertTrue(records.hasRoom());
        assertFalse(records.hasRoomToRefuse() && !records.hasRoom(), "the reserve is still in use");
        records.attemptRefused(refused, 1, true);
        records.retryHasRoom(refused); // its retry found room: it joins the window
        assertFalse(records.isFromReserve(refused));
        assertFalse(records.isRefusedForResources(refused));
        assertFalse(records.hasRoom(), "the window is full again");
        assertTrue(records.hasRoomToRefuse(), "the reserve is free again");
        records.close(SendSlots.key(0, 7), refused);
        assertTrue(records.hasRoom(), "closed from the window, not the reserve");
        assertEquals(6, records.inUse());
    }

    @Test
    void shouldMoveAMessagesStateAsItIsReceivedAndRefused()
    {
        final InboundMessageRecords records = attached(4);
        final int record = records.open(SendSlots.key(1, 5), false, MessageKinds.SEND, 1, 5, 2048, 2, 9, 3, 77L);
        assertEquals(MessageKinds.SEND, records.kind(record));
        assertEquals(2048, records.length(record));
        assertEquals(2, records.expected(record));
        assertEquals(9, records.rsn(record));
        assertEquals(3, records.attempt(record));
        assertEquals(77L, records.tag(record));
        assertEquals(MISSING, records.receive(record), "no receive matched yet");
        assertFalse(records.isDone(record));

        assertFalse(records.countPacket(record));
        records.attemptRefused(record, 4, false); // RNR: what was received of the attempt no longer counts
        assertTrue(records.isAttemptRefused(record));
        assertEquals(0, records.received(record));
        assertEquals(4, records.refusal(record));
        records.laterAttempt(record, 4);
        assertFalse(records.isAttemptRefused(record), "the retry starts clean");
        assertEquals(4, records.attempt(record));
        assertFalse(records.countPacket(record));
        assertTrue(records.countPacket(record), "the last packet completes it");
        assertTrue(records.isDone(record));

        final int other = open(records, 1, 6, false);
        records.writeTarget(other, 0x1000L, 55);
        assertEquals(0x1000L, records.base(other));
        assertEquals(55, records.rkey(other));
        records.refused(other, 3, 5);
        assertTrue(records.isDone(other));
        assertEquals(3, records.syndrome(other));
        assertEquals(5, records.refusal(other));

        final int read = records.open(SendSlots.key(2, 0), false, MessageKinds.READ, 2, 0, 100, 1, 0, 0, 0L);
        records.readTaken(read);
        assertTrue(records.isDone(read));
        assertEquals(1, records.received(read));

        // a record handed out again starts as a new message's
        records.close(SendSlots.key(1, 6), other);
        final int again = open(records, 3, 0, false);
        assertEquals(other, again, "the free list is a stack");
        assertEquals(0, records.syndrome(again));
        assertEquals(0, records.refusal(again));
        assertFalse(records.isDone(again));
    }

    @Test
    void shouldAttachOnlyWhenEmptyAndGiveTheStorageBack()
    {
        final InboundMessageRecords records = new InboundMessageRecords(4);
        assertFalse(records.isAttached());
        assertFalse(records.isDetachable());
        assertEquals(MISSING, records.recordOf(SendSlots.key(0, 0)), "detached: no record");
        assertThrows(IllegalStateException.class, () -> records.attach(new InboundMessageRecords.Storage(8)));

        final InboundMessageRecords.Storage storage = new InboundMessageRecords.Storage(4);
        records.attach(storage);
        assertThrows(IllegalStateException.class, () -> records.attach(new InboundMessageRecords.Storage(4)));
        final int record = open(records, 0, 0, false);
        assertFalse(records.isDetachable(), "a record in use");
        records.close(SendSlots.key(0, 0), record);
        assertTrue(records.isDetachable());
        assertSame(storage, records.detach());
        assertFalse(records.isAttached());

        storage.clear();
        records.attach(storage);
        assertNotEquals(MISSING, open(records, 0, 1, false));
        assertEquals(MISSING, records.recordOf(SendSlots.key(0, 0)), "nothing of the old records is found");
        assertTrue(storage.bytes() > 0);
        assertTrue(InboundMessageRecords.stateBytes(4) > 0);
    }
}
