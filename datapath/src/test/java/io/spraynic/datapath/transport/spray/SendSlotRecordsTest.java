package io.spraynic.datapath.transport.spray;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.function.ToLongBiFunction;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The layout of a slot's records (issue 13): every field round-trips at its named offset without touching its
 * neighbours (in its slot or the next), a long across its two ints, the flags and the kind independent of one
 * another, the rare record apart from the main one. Two fields given overlapping offsets fail here.
 */
@Timeout(10)
class SendSlotRecordsTest
{
    private static final int CAPACITY = 3;
    private static final int SLOT = 1; // a middle slot: a write past either end of its record shows in a neighbour
    private static final long PATTERN = 0x8765_4321_FEDC_BA98L; // both halves with their sign bits set

    /** A field of a record: its name, its offset in ints, its width in ints, whether it lies in the rare record. */
    private record Field(String name, int offset, int ints, boolean rare, ToLongBiFunction<SendSlots, Integer> get,
        SlotSetter set)
    {
    }

    @FunctionalInterface
    private interface SlotSetter
    {
        void set(SendSlots slots, int slot, long value);
    }

    private static Field intField(
        final String name, final int offset, final ToLongBiFunction<SendSlots, Integer> get, final SlotSetter set)
    {
        return new Field(name, offset, 1, false, get, set);
    }

    private static final List<Field> FIELDS = List.of(
        new Field("localAddress", SendSlots.LOCAL_ADDRESS_OFFSET, 2, false,
            SendSlots::localAddress, (slots, slot, value) -> slots.localAddress(slot, value)),
        new Field("remoteAddress", SendSlots.REMOTE_ADDRESS_OFFSET, 2, false,
            SendSlots::remoteAddress, (slots, slot, value) -> slots.remoteAddress(slot, value)),
        new Field("messageTag", SendSlots.MESSAGE_TAG_OFFSET, 2, false,
            SendSlots::messageTag, (slots, slot, value) -> slots.messageTag(slot, value)),
        intField("stream", SendSlots.STREAM_OFFSET, SendSlots::stream,
            (slots, slot, value) -> slots.stream(slot, (int)value)),
        intField("msn", SendSlots.MSN_OFFSET, SendSlots::msn, (slots, slot, value) -> slots.msn(slot, (int)value)),
        intField("rsn", SendSlots.RSN_OFFSET, SendSlots::rsn, (slots, slot, value) -> slots.rsn(slot, (int)value)),
        intField("length", SendSlots.LENGTH_OFFSET, SendSlots::length,
            (slots, slot, value) -> slots.length(slot, (int)value)),
        intField("rkey", SendSlots.RKEY_OFFSET, SendSlots::rkey, (slots, slot, value) -> slots.rkey(slot, (int)value)),
        intField("immediate", SendSlots.IMMEDIATE_OFFSET, SendSlots::immediate,
            (slots, slot, value) -> slots.immediate(slot, (int)value)),
        intField("packets", SendSlots.PACKETS_OFFSET, SendSlots::packets,
            (slots, slot, value) -> slots.packets(slot, (int)value)),
        intField("nextPacket", SendSlots.NEXT_PACKET_OFFSET, SendSlots::nextPacket,
            (slots, slot, value) -> slots.nextPacket(slot, (int)value)),
        intField("rnrCount", SendSlots.RNR_COUNT_OFFSET, SendSlots::rnrCount,
            (slots, slot, value) -> slots.rnrCount(slot, (int)value)),
        new Field("wrId", SendSlots.WR_ID_OFFSET, 2, false,
            SendSlots::wrId, (slots, slot, value) -> slots.wrId(slot, value)),
        intField("acked", SendSlots.ACKED_OFFSET, SendSlots::acked,
            (slots, slot, value) -> slots.acked(slot, (int)value)),
        intField("outstanding", SendSlots.OUTSTANDING_OFFSET, SendSlots::outstanding,
            (slots, slot, value) -> slots.outstanding(slot, (int)value)),
        intField("status", SendSlots.STATUS_OFFSET, SendSlots::status,
            (slots, slot, value) -> slots.status(slot, (int)value)),
        intField("nextInStream", SendSlots.NEXT_IN_STREAM_OFFSET, SendSlots::nextInStream,
            (slots, slot, value) -> slots.nextInStream(slot, (int)value)),
        intField("generation", SendSlots.GENERATION_OFFSET, SendSlots::generation,
            (slots, slot, value) -> slots.generation(slot, (int)value)),
        new Field("responseTag", SendSlots.RESPONSE_TAG_OFFSET, 2, true,
            SendSlots::responseTag, (slots, slot, value) -> slots.responseTag(slot, value)),
        new Field("rnrRetryAt", SendSlots.RNR_RETRY_AT_OFFSET, 2, true,
            SendSlots::rnrRetryAt, (slots, slot, value) -> slots.rnrRetryAt(slot, value)),
        new Field("queryAt", SendSlots.QUERY_AT_OFFSET, 2, true,
            SendSlots::queryAt, (slots, slot, value) -> slots.queryAt(slot, value)),
        new Field("heldAt", SendSlots.HELD_AT_OFFSET, 2, true,
            SendSlots::heldAt, (slots, slot, value) -> slots.heldAt(slot, value)),
        new Field("readExpected", SendSlots.READ_EXPECTED_OFFSET, 1, true,
            SendSlots::readExpected, (slots, slot, value) -> slots.readExpected(slot, (int)value)),
        new Field("readReceived", SendSlots.READ_RECEIVED_OFFSET, 1, true,
            SendSlots::readReceived, (slots, slot, value) -> slots.readReceived(slot, (int)value)));

    private static int startOf(final Field field)
    {
        return SLOT * (field.rare() ? SendSlots.RARE_INTS : SendSlots.RECORD_INTS) + field.offset();
    }

    @Test
    void shouldGiveEveryFieldIntsOfItsOwnWithinItsRecord()
    {
        final boolean[] mainTaken = new boolean[SendSlots.RECORD_INTS];
        final boolean[] rareTaken = new boolean[SendSlots.RARE_INTS];
        // the kind and the flags: one int of the main record, not a field of the table above
        mainTaken[SendSlots.KIND_FLAGS_OFFSET] = true;
        for (final Field field : FIELDS)
        {
            final boolean[] taken = field.rare() ? rareTaken : mainTaken;
            for (int i = 0; i < field.ints(); i++)
            {
                final int index = field.offset() + i;
                assertTrue(index < taken.length, field.name() + " runs past its record");
                assertFalse(taken[index], field.name() + " overlaps another field at int " + index);
                taken[index] = true;
            }
        }
    }

    @Test
    void shouldRoundTripEveryFieldAtItsOffsetAndTouchNothingElse()
    {
        for (final Field field : FIELDS)
        {
            final SendSlots slots = new SendSlots(CAPACITY, 1, 1024);
            final int[] mainBefore = slots.records.clone();
            final int[] rareBefore = slots.rareRecords.clone();
            final long value = field.ints() == 2 ? PATTERN : (int)PATTERN;

            field.set().set(slots, SLOT, value);

            assertEquals(value, field.get().applyAsLong(slots, SLOT), field.name() + " round trip");
            final int[] expectedMain = mainBefore.clone();
            final int[] expectedRare = rareBefore.clone();
            final int[] expected = field.rare() ? expectedRare : expectedMain;
            expected[startOf(field)] = (int)value; // a long's low half first
            if (field.ints() == 2)
            {
                expected[startOf(field) + 1] = (int)(value >>> 32);
            }
            assertArrayEquals(expectedMain, slots.records, field.name() + ": the main records, all slots");
            assertArrayEquals(expectedRare, slots.rareRecords, field.name() + ": the rare records, all slots");
        }
    }

    @Test
    void shouldKeepEveryFieldWhenAllAreWrittenWithDistinctValues()
    {
        final SendSlots slots = new SendSlots(CAPACITY, 1, 1024);
        for (int slot = 0; slot < CAPACITY; slot++)
        {
            for (int i = 0; i < FIELDS.size(); i++)
            {
                FIELDS.get(i).set().set(slots, slot, valueOf(slot, i, FIELDS.get(i)));
            }
        }
        for (int slot = 0; slot < CAPACITY; slot++)
        {
            for (int i = 0; i < FIELDS.size(); i++)
            {
                final Field field = FIELDS.get(i);
                assertEquals(valueOf(slot, i, field), field.get().applyAsLong(slots, slot),
                    field.name() + " of slot " + slot + " after every field of every slot was written");
            }
        }
    }

    private static long valueOf(final int slot, final int fieldIndex, final Field field)
    {
        final long value = ((long)(slot * 100 + fieldIndex) << 40) | 0x8000_0000L | (slot * 100L + fieldIndex);
        return field.ints() == 2 ? value : (int)value;
    }

    @Test
    void shouldKeepALongsHalvesApart()
    {
        final SendSlots slots = new SendSlots(CAPACITY, 1, 1024);
        slots.wrId(SLOT, 0x0000_0001_FFFF_FFFFL); // a low half with its sign bit set must not spill into the high
        assertEquals(0x0000_0001_FFFF_FFFFL, slots.wrId(SLOT));
        slots.wrId(SLOT, -1L);
        assertEquals(-1L, slots.wrId(SLOT));
        slots.wrId(SLOT, Long.MIN_VALUE);
        assertEquals(Long.MIN_VALUE, slots.wrId(SLOT));
        final int lowHalf = SLOT * SendSlots.RECORD_INTS + SendSlots.WR_ID_OFFSET;
        assertEquals(0, slots.records[lowHalf], "the low half of Long.MIN_VALUE");
        assertEquals(Integer.MIN_VALUE, slots.records[lowHalf + 1], "its high half");
    }

    @Test
    void shouldKeepTheKindAndEachFlagIndependent()
    {
        final List<String> names = List.of("signaled", "solicited", "delivered", "inSendQueue", "rnrWaiting", "held",
            "started");
        for (int chosen = 0; chosen < names.size(); chosen++)
        {
            final SendSlots slots = new SendSlots(CAPACITY, 1, 1024);
            slots.kind(SLOT, MessageKinds.READ);
            setFlag(slots, chosen, true);
            slots.kind(SLOT, SendSlots.FREE); // all ones in the kind's byte: must not reach the flags
            slots.kind(SLOT, MessageKinds.READ);
            for (int flag = 0; flag < names.size(); flag++)
            {
                assertEquals(flag == chosen, flag(slots, flag), names.get(flag) + " with only " + names.get(chosen) +
                    " set");
                assertFalse(flag(slots, flag) && !flag(slots, chosen));
            }
            assertEquals(MessageKinds.READ, slots.kind(SLOT), "the kind beside " + names.get(chosen));
            slots.kind(SLOT, SendSlots.FREE);
            assertEquals(SendSlots.FREE, slots.kind(SLOT), "a negative kind reads back as itself");
            assertTrue(flag(slots, chosen), names.get(chosen) + " kept through the kind's writes");
            setFlag(slots, chosen, false);
            for (int flag = 0; flag < names.size(); flag++)
            {
                assertFalse(flag(slots, flag), names.get(flag) + " after " + names.get(chosen) + " was cleared");
            }
            assertEquals(0, slots.records[(SLOT - 1) * SendSlots.RECORD_INTS + SendSlots.KIND_FLAGS_OFFSET]);
            assertEquals(0, slots.records[(SLOT + 1) * SendSlots.RECORD_INTS + SendSlots.KIND_FLAGS_OFFSET]);
        }
    }

    private static void setFlag(final SendSlots slots, final int flag, final boolean value)
    {
        switch (flag)
        {
            case 0 -> slots.signaled(SLOT, value);
            case 1 -> slots.solicited(SLOT, value);
            case 2 -> slots.delivered(SLOT, value);
            case 3 -> slots.inSendQueue(SLOT, value);
            case 4 -> slots.rnrWaiting(SLOT, value);
            case 5 -> slots.held(SLOT, value);
            default -> slots.started(SLOT, value);
        }
    }

    private static boolean flag(final SendSlots slots, final int flag)
    {
        return switch (flag)
        {
            case 0 -> slots.signaled(SLOT);
            case 1 -> slots.solicited(SLOT);
            case 2 -> slots.delivered(SLOT);
            case 3 -> slots.inSendQueue(SLOT);
            case 4 -> slots.rnrWaiting(SLOT);
            case 5 -> slots.held(SLOT);
            default -> slots.started(SLOT);
        };
    }
}
