package io.spraynic.datapath.transport.spray;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The outbound message table: slots, handles and their generations, stream lists, the send queue, holds and
 * RNR waits (docs/PROTOCOL.md S4, S9.3).
 */
@Timeout(10)
class SendSlotsTest
{
    private static final int MTU = 1024;

    private static int post(final SendSlots slots, final int streamId, final byte kind, final int length)
    {
        final int slot = slots.take();
        slots.kind(slot, kind);
        slots.stream(slot, streamId);
        slots.msn(slot, slots.takeMsn(streamId));
        slots.length(slot, length);
        slots.packets(slot, SendSlots.packetsFor(length, MTU));
        slots.appendToStream(slot);
        slots.enqueueSend(slot);
        return slot;
    }

    @Test
    void shouldCountPacketsOfAMessageAndPayloadOfEach()
    {
        assertEquals(1, SendSlots.packetsFor(0, MTU), "an empty message still takes a packet");
        assertEquals(1, SendSlots.packetsFor(MTU, MTU));
        assertEquals(2, SendSlots.packetsFor(MTU + 1, MTU));
        assertEquals(2_097_152, SendSlots.packetsFor(Integer.MAX_VALUE, MTU), "no int overflow");

        final SendSlots slots = new SendSlots(4, 2, MTU);
        final int write = post(slots, 0, MessageKinds.WRITE, 2 * MTU + 10);
        assertEquals(MTU, slots.payloadOf(write, 0));
        assertEquals(MTU, slots.payloadOf(write, 1));
        assertEquals(10, slots.payloadOf(write, 2));
        final int read = post(slots, 0, MessageKinds.READ, 5 * MTU);
        assertEquals(0, slots.payloadOf(read, 0), "a READ request carries no payload");
    }

    @Test
    void shouldNameAPacketByHandleAndRefuseAnEarlierUseOfItsSlot()
    {
        final SendSlots slots = new SendSlots(2, 1, MTU);
        final int slot = post(slots, 0, MessageKinds.SEND, 3 * MTU);
        final long handle = slots.handle(slot, 2);
        assertEquals(slot, SendSlots.slotOf(handle));
        assertEquals(2, SendSlots.packetOf(handle));
        assertTrue(slots.isCurrent(handle));

        slots.status(slot, 0);
        slots.delivered(slot, true);
        slots.dequeueSend();
        assertTrue(slots.isFinished(slot));
        slots.free(slot);
        assertFalse(slots.isFinished(slot), "a free slot is not freed twice");
        assertFalse(slots.isCurrent(handle), "an ACK of the slot's earlier message must not count for the next");
        assertTrue(slots.isFree(slot));
        assertEquals(slot, post(slots, 0, MessageKinds.SEND, 1), "last freed, first taken");
        assertFalse(slots.isCurrent(handle));
    }

    @Test
    void shouldNotFreeASlotWithPacketsInFlightQueuedOrUndelivered()
    {
        final SendSlots slots = new SendSlots(2, 1, MTU);
        final int slot = post(slots, 0, MessageKinds.WRITE, MTU);
        slots.status(slot, 0);
        slots.delivered(slot, true);
        assertFalse(slots.isFinished(slot), "still in the send queue");
        slots.dequeueSend();
        slots.outstanding(slot, 1);
        assertFalse(slots.isFinished(slot), "a packet in flight");
        slots.outstanding(slot, 0);
        slots.delivered(slot, false);
        assertFalse(slots.isFinished(slot), "completion not delivered");
        slots.delivered(slot, true);
        slots.status(slot, SendSlots.PENDING);
        assertFalse(slots.isFinished(slot), "not finished");
    }

    @Test
    void shouldFillAndEmptyTheTableWithoutLosingASlot()
    {
        final SendSlots slots = new SendSlots(3, 1, MTU);
        for (int round = 0; round < 5; round++)
        {
            final int[] taken = new int[3];
            for (int i = 0; i < 3; i++)
            {
                assertTrue(slots.hasFree());
                taken[i] = post(slots, 0, MessageKinds.WRITE, 1);
            }
            assertFalse(slots.hasFree());
            assertEquals(3, slots.inUse());
            for (int i = 0; i < 3; i++)
            {
                slots.dequeueSend();
                slots.forget(taken[i]);
                slots.free(taken[i]);
            }
            assertEquals(0, slots.inUse());
            assertEquals(SendSlots.MISSING, slots.slotFor(SendSlots.key(0, 3 * round)));
        }
    }

    @Test
    void shouldListAStreamsSlotsInMsnOrderAndFindThemByMsn()
    {
        final SendSlots slots = new SendSlots(8, 3, MTU);
        final int first = post(slots, 2, MessageKinds.WRITE, 1);
        final int other = post(slots, 1, MessageKinds.WRITE, 1);
        final int second = post(slots, 2, MessageKinds.SEND, 1);
        assertEquals(first, slots.streamHead(2));
        assertEquals(second, slots.nextInStream(first));
        assertEquals(SendSlots.MISSING, slots.nextInStream(second));
        assertEquals(second, slots.streamTail(2));
        assertEquals(other, slots.streamHead(1));
        assertEquals(second, slots.slotFor(SendSlots.key(2, 1)));
        assertEquals(other, slots.slotFor(SendSlots.key(1, 0)));
        assertEquals(SendSlots.MISSING, slots.slotFor(SendSlots.key(0, 0)));
        assertEquals(SendSlots.key(2, -1) >>> 32, 2, "MSN wraps without touching the stream");
    }

    @Test
    void shouldServeTheSendQueueInOrderAcrossTheRingsEnd()
    {
        final SendSlots slots = new SendSlots(3, 1, MTU);
        final int a = post(slots, 0, MessageKinds.WRITE, 5 * MTU);
        final int b = post(slots, 0, MessageKinds.WRITE, 2 * MTU);
        assertTrue(slots.queuedPacketsAbove(6));
        assertFalse(slots.queuedPacketsAbove(7));
        slots.nextPacket(a, 4);
        assertFalse(slots.queuedPacketsAbove(3), "1 + 2 packets still to make");
        assertEquals(a, slots.sendQueueHead());
        slots.dequeueSend();
        assertFalse(slots.inSendQueue(a));
        final int c = post(slots, 0, MessageKinds.WRITE, 1);
        slots.enqueueSend(a); // wraps round the ring
        assertEquals(3, slots.sendQueueSize());
        assertEquals(b, slots.sendQueueHead());
        slots.dequeueSend();
        assertEquals(c, slots.sendQueueHead());
        slots.dequeueSend();
        assertEquals(a, slots.sendQueueHead());
        slots.dequeueSend();
        assertEquals(0, slots.sendQueueSize());
    }

    @Test
    void shouldCountHoldsAndRnrWaitsOnceAndClearThemOnAFlush()
    {
        final SendSlots slots = new SendSlots(4, 1, MTU);
        final int a = post(slots, 0, MessageKinds.SEND, 1);
        final int b = post(slots, 0, MessageKinds.SEND, 1);
        assertTrue(slots.hold(a, 100, 50));
        assertFalse(slots.hold(a, 200, 50), "held once");
        assertEquals(150, slots.queryAt(a));
        assertEquals(100, slots.heldAt(a));
        assertEquals(1, slots.heldCount());
        slots.unhold(a);
        slots.unhold(a);
        assertEquals(0, slots.heldCount());

        slots.startRnrWait(b, 1_000);
        assertEquals(1, slots.rnrWaitingCount());
        assertEquals(1_000, slots.rnrRetryAt(b));
        slots.stopRnrWait(b);
        slots.stopRnrWait(b);
        assertEquals(0, slots.rnrWaitingCount());

        slots.hold(a, 0, 1);
        slots.startRnrWait(b, 1);
        slots.outstanding(a, 3);
        slots.clearInFlight();
        assertEquals(0, slots.heldCount());
        assertEquals(0, slots.rnrWaitingCount());
        assertEquals(0, slots.sendQueueSize());
        assertFalse(slots.held(a));
        assertFalse(slots.rnrWaiting(b));
        assertEquals(0, slots.outstanding(a));
        assertFalse(slots.inSendQueue(a));
    }

    // the code before issue 13's shift, kept verbatim
    private static int packetsForByDivision(final int length, final int mtu)
    {
        return length == 0 ? 1 : (int)((length + (long)mtu - 1) / mtu);
    }

    @Test
    void shouldCountPacketsAsTheDivisionDidForEveryLengthAndMtu()
    {
        final java.util.SplittableRandom random = new java.util.SplittableRandom(13);
        final int[] mtus = {256, 512, 1024, 1500, 2048, 4096, 9000, 1, 3, 1 << 30, Integer.MAX_VALUE};
        for (int i = 0; i < 2_000_000; i++)
        {
            final int mtu = i % 3 == 0 ? 1 + random.nextInt(Integer.MAX_VALUE) : mtus[random.nextInt(mtus.length)];
            final int length = switch (i % 4)
            {
                case 0 -> random.nextInt(); // negative too: a hostile length is counted as before
                case 1 -> random.nextInt(4 * mtu > 0 ? 4 * mtu : Integer.MAX_VALUE);
                case 2 -> Integer.MAX_VALUE - random.nextInt(mtu);
                default -> mtu * (1 + random.nextInt(8)) + random.nextInt(3) - 1;
            };
            assertEquals(packetsForByDivision(length, mtu), SendSlots.packetsFor(length, mtu),
                "length " + length + ", mtu " + mtu);
        }
    }

    @Test
    void shouldServeTheSendQueueAsADequeOverRandomOperations()
    {
        final java.util.SplittableRandom random = new java.util.SplittableRandom(31);
        for (final int capacity : new int[] {1, 2, 3, 7, 64, 100})
        {
            final SendSlots slots = new SendSlots(capacity, 1, MTU);
            final java.util.ArrayDeque<Integer> reference = new java.util.ArrayDeque<>();
            for (int step = 0; step < 20_000; step++)
            {
                final int action = random.nextInt(3);
                if (action == 0 && reference.size() < capacity)
                {
                    final int slot = random.nextInt(capacity);
                    slots.enqueueSend(slot);
                    reference.addLast(slot);
                }
                else if (action == 1 && reference.size() < capacity)
                {
                    final int slot = random.nextInt(capacity);
                    slots.enqueueSendFirst(slot);
                    reference.addFirst(slot);
                }
                else if (!reference.isEmpty())
                {
                    assertEquals(reference.peekFirst(), slots.sendQueueHead(), "capacity " + capacity + " step " + step);
                    slots.dequeueSend();
                    reference.removeFirst();
                }
                assertEquals(reference.size(), slots.sendQueueSize());
                if (!reference.isEmpty())
                {
                    assertEquals(reference.peekFirst(), slots.sendQueueHead());
                }
            }
        }
    }
}
