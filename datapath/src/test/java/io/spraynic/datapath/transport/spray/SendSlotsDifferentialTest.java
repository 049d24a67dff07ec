package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

/**
 * Issue 13: {@link SendSlots}, one record per slot, against {@link SendSlotsReference}, the parallel arrays it
 * replaced (verbatim), over random sequences of what the connection does to its table: posts of every kind and READ
 * responses (to an errored stream too), packets made in send-queue order under the peer's window and READ limit,
 * ACKs of current and stale handles, completions held and released, RNR waits and retries, failures that flush a
 * stream, in-order delivery and freeing, flushes, and the storage detached and attached again. After every step,
 * every field of every slot and stream, every count, the queue's head and the answers of every query must be the
 * same.
 */
@Timeout(60)
class SendSlotsDifferentialTest
{
    private static final int MTU = 1024;
    private static final int STREAMS = 3;
    private static final byte[] KINDS = {
        MessageKinds.WRITE, MessageKinds.WRITE_IMM, MessageKinds.SEND, MessageKinds.SEND_IMM,
        MessageKinds.READ, MessageKinds.READ_RESPONSE};

    private final MemoryRegion regionA = new ProtectionDomain().register(Arena.ofAuto().allocate(64), AccessFlags.NONE);
    private final MemoryRegion regionB = new ProtectionDomain().register(Arena.ofAuto().allocate(64), AccessFlags.NONE);

    @Test
    void shouldMatchTheParallelArraysOverRandomSequences()
    {
        for (long seed = 1; seed <= 60; seed++)
        {
            final int capacity = 1 + (int)(seed % 9);
            run(seed, capacity, 3_000);
        }
    }

    @Test
    void shouldMatchWithATableOfManySlots()
    {
        run(4242, 64, 20_000);
    }

    private void run(final long seed, final int capacity, final int steps)
    {
        final SplittableRandom random = new SplittableRandom(seed);
        final SendSlots slots = new SendSlots(capacity, STREAMS, MTU, null);
        final SendSlotsReference reference = new SendSlotsReference(capacity, STREAMS, MTU, null);
        SendSlots.Storage storage = new SendSlots.Storage(capacity);
        SendSlotsReference.Storage referenceStorage = new SendSlotsReference.Storage(capacity);
        slots.attach(storage);
        reference.attach(referenceStorage);
        final long[] handles = new long[64];
        int handleCount = 0;
        long now = 0;
        for (int step = 0; step < steps; step++)
        {
            final String where = "seed " + seed + " capacity " + capacity + " step " + step;
            now += random.nextInt(100);
            final int op = random.nextInt(100);
            if (!slots.isAttached())
            {
                assertEquals(reference.isAttached(), false, where);
                assertEquals(reference.slotFor(SendSlots.key(0, 0)), slots.slotFor(SendSlots.key(0, 0)), where);
                storage.clear();
                referenceStorage.clear();
                slots.attach(storage);
                reference.attach(referenceStorage);
            }
            else if (op < 22)
            {
                post(random, slots, reference, where);
            }
            else if (op < 25)
            {
                postResponse(random, slots, reference, where);
            }
            else if (op < 45)
            {
                final long handle = makePacket(random, slots, reference, where);
                if (handle >= 0)
                {
                    handles[handleCount < handles.length ? handleCount++ : random.nextInt(handles.length)] = handle;
                }
            }
            else if (op < 65 && handleCount > 0)
            {
                final int which = random.nextInt(handleCount);
                ack(handles[which], slots, reference, where);
                handles[which] = handles[--handleCount];
            }
            else if (op < 70)
            {
                final int slot = random.nextInt(capacity);
                assertEquals(reference.hold(slot, now, 50), slots.hold(slot, now, 50), where);
            }
            else if (op < 74)
            {
                final int slot = random.nextInt(capacity);
                reference.unhold(slot);
                slots.unhold(slot);
            }
            else if (op < 78)
            {
                rnr(random.nextInt(capacity), now, slots, reference);
            }
            else if (op < 82)
            {
                retryRnr(now, slots, reference);
            }
            else if (op < 84)
            {
                fail(random.nextInt(capacity), slots, reference);
            }
            else if (op < 94)
            {
                deliverAndFree(random.nextInt(STREAMS), slots, reference, where);
            }
            else if (op < 96)
            {
                rareFields(random, random.nextInt(capacity), now, slots, reference);
            }
            else if (op < 97)
            {
                reference.clearInFlight();
                slots.clearInFlight();
                handleCount = 0;
            }
            else if (slots.isDetachable())
            {
                assertEquals(true, reference.isDetachable(), where);
                assertSame(storage, slots.detach(), where);
                assertSame(referenceStorage, reference.detach(), where);
                if (random.nextBoolean())
                {
                    storage = new SendSlots.Storage(capacity);
                    referenceStorage = new SendSlotsReference.Storage(capacity);
                }
                handleCount = 0;
                continue;
            }
            assertSameState(slots, reference, random, where);
        }
    }

    private void post(
        final SplittableRandom random, final SendSlots slots, final SendSlotsReference reference, final String where)
    {
        assertEquals(reference.hasFree(), slots.hasFree(), where);
        if (!slots.hasFree())
        {
            return;
        }
        final int slot = slots.take();
        assertEquals(reference.take(), slot, where);
        final byte kind = KINDS[random.nextInt(KINDS.length - 1)];
        final int streamId = random.nextInt(STREAMS);
        final int msn = slots.takeMsn(streamId);
        assertEquals(reference.nextMsn[streamId]++, msn, where);
        final boolean consumesReceive = kind == MessageKinds.SEND || kind == MessageKinds.SEND_IMM;
        final int rsn = consumesReceive ? slots.takeRsn(streamId) : 0;
        assertEquals(consumesReceive ? reference.nextRsn[streamId]++ : 0, rsn, where);
        final int length = random.nextInt(4) == 0 ? 0 : random.nextInt(5 * MTU);
        final int dataPackets = SendSlots.packetsFor(length, MTU);
        final long wrId = random.nextLong();
        final MemoryRegion region = length > 0 ? (random.nextBoolean() ? regionA : regionB) : null;
        final long localAddress = random.nextLong();
        final long remoteAddress = random.nextLong();
        final int rkey = random.nextInt();
        final int immediate = random.nextInt();
        final boolean signaled = random.nextBoolean();
        final boolean solicited = random.nextBoolean();
        final long messageTag = random.nextLong();
        final long responseTag = kind == MessageKinds.READ ? random.nextLong() : 0;
        final int packets = kind == MessageKinds.READ ? 1 : dataPackets;
        final int readExpected = kind == MessageKinds.READ ? dataPackets : 0;

        slots.kind(slot, kind);
        slots.wrId(slot, wrId);
        slots.stream(slot, streamId);
        slots.msn(slot, msn);
        slots.rsn(slot, rsn);
        slots.region(slot, region);
        slots.localAddress(slot, localAddress);
        slots.length(slot, length);
        slots.remoteAddress(slot, remoteAddress);
        slots.rkey(slot, rkey);
        slots.immediate(slot, immediate);
        slots.signaled(slot, signaled);
        slots.solicited(slot, solicited);
        slots.messageTag(slot, messageTag);
        slots.responseTag(slot, responseTag);
        slots.packets(slot, packets);
        slots.readExpected(slot, readExpected);
        slots.appendToStream(slot);

        reference.kind[slot] = kind;
        reference.wrId[slot] = wrId;
        reference.stream[slot] = streamId;
        reference.msn[slot] = msn;
        reference.rsn[slot] = rsn;
        reference.region[slot] = region;
        reference.localAddress[slot] = localAddress;
        reference.length[slot] = length;
        reference.remoteAddress[slot] = remoteAddress;
        reference.rkey[slot] = rkey;
        reference.immediate[slot] = immediate;
        reference.signaled[slot] = signaled;
        reference.solicited[slot] = solicited;
        reference.messageTag[slot] = messageTag;
        reference.responseTag[slot] = responseTag;
        reference.packets[slot] = packets;
        reference.readExpected[slot] = readExpected;
        reference.appendToStream(slot);

        if (slots.errored(streamId))
        {
            slots.status(slot, WorkCompletionStatus.WR_FLUSH_ERR.ordinal());
            slots.nextPacket(slot, slots.packets(slot));
            reference.status[slot] = WorkCompletionStatus.WR_FLUSH_ERR.ordinal();
            reference.nextPacket[slot] = reference.packets[slot];
        }
        else
        {
            slots.enqueueSend(slot);
            reference.enqueueSend(slot);
        }
    }

    private void postResponse(
        final SplittableRandom random, final SendSlots slots, final SendSlotsReference reference, final String where)
    {
        if (!slots.hasFree())
        {
            return;
        }
        final int slot = slots.take();
        assertEquals(reference.take(), slot, where);
        final int length = random.nextInt(3 * MTU);
        final int streamId = random.nextInt(STREAMS);
        final int msn = random.nextInt();
        final long address = random.nextLong();
        final long tag = random.nextLong();
        slots.kind(slot, MessageKinds.READ_RESPONSE);
        slots.wrId(slot, 0);
        slots.stream(slot, streamId);
        slots.msn(slot, msn);
        slots.rsn(slot, 0);
        slots.region(slot, length > 0 ? regionB : null);
        slots.localAddress(slot, address);
        slots.length(slot, length);
        slots.remoteAddress(slot, 0);
        slots.rkey(slot, 0);
        slots.messageTag(slot, tag);
        slots.responseTag(slot, 0);
        slots.signaled(slot, false);
        slots.solicited(slot, false);
        slots.packets(slot, SendSlots.packetsFor(length, MTU));
        slots.readExpected(slot, 0);
        slots.delivered(slot, true);
        slots.responseQueued();
        slots.enqueueSend(slot);

        reference.kind[slot] = MessageKinds.READ_RESPONSE;
        reference.wrId[slot] = 0;
        reference.stream[slot] = streamId;
        reference.msn[slot] = msn;
        reference.rsn[slot] = 0;
        reference.region[slot] = length > 0 ? regionB : null;
        reference.localAddress[slot] = address;
        reference.length[slot] = length;
        reference.remoteAddress[slot] = 0;
        reference.rkey[slot] = 0;
        reference.messageTag[slot] = tag;
        reference.responseTag[slot] = 0;
        reference.signaled[slot] = false;
        reference.solicited[slot] = false;
        reference.packets[slot] = SendSlotsReference.packetsFor(length, MTU);
        reference.readExpected[slot] = 0;
        reference.delivered[slot] = true;
        reference.responseQueued();
        reference.enqueueSend(slot);
    }

    // DataSender.sendData's order: drop finished heads, start a message within the peer's limits, make its next packet
    private long makePacket(
        final SplittableRandom random, final SendSlots slots, final SendSlotsReference reference, final String where)
    {
        final int budget = random.nextInt(8);
        assertEquals(reference.queuedPacketsAbove(budget), slots.queuedPacketsAbove(budget), where);
        while (slots.sendQueueSize() > 0)
        {
            final int slot = slots.sendQueueHead();
            assertEquals(reference.sendQueueHead(), slot, where);
            if (slots.nextPacket(slot) >= slots.packets(slot))
            {
                slots.dequeueSend();
                reference.dequeueSend();
                continue;
            }
            final int window = random.nextInt(6);
            final int reads = random.nextInt(3);
            final boolean mayStart = slots.mayStart(slot, window, reads);
            assertEquals(reference.mayStart(slot, window, reads), mayStart, where);
            if (slots.nextPacket(slot) == 0 && slots.kind(slot) != MessageKinds.READ_RESPONSE && !mayStart)
            {
                return -1;
            }
            final int packet = slots.nextPacket(slot);
            final long handle = slots.handle(slot, packet);
            assertEquals(reference.handle(slot, packet), handle, where);
            assertEquals(reference.payloadOf(slot, packet), slots.payloadOf(slot, packet), where);
            assertEquals(reference.attempt(slot), slots.attempt(slot), where);
            if (slots.kind(slot) == MessageKinds.READ_RESPONSE)
            {
                if (packet + 1 == slots.packets(slot))
                {
                    slots.responseSent();
                    reference.responseSent();
                }
            }
            else
            {
                slots.start(slot);
                reference.start(slot);
            }
            slots.nextPacket(slot, slots.nextPacket(slot) + 1);
            slots.outstanding(slot, slots.outstanding(slot) + 1);
            reference.nextPacket[slot]++;
            reference.outstanding[slot]++;
            return handle;
        }
        return -1;
    }

    // SendCompletions.onAck
    private void ack(final long handle, final SendSlots slots, final SendSlotsReference reference, final String where)
    {
        final boolean current = slots.isCurrent(handle);
        assertEquals(reference.isCurrent(handle), current, where);
        if (!current)
        {
            return;
        }
        final int slot = SendSlots.slotOf(handle);
        slots.outstanding(slot, slots.outstanding(slot) - 1);
        slots.acked(slot, slots.acked(slot) + 1);
        reference.outstanding[slot]--;
        reference.acked[slot]++;
        if (slots.status(slot) == SendSlots.PENDING && !slots.rnrWaiting(slot) &&
            slots.acked(slot) == slots.packets(slot) && slots.kind(slot) != MessageKinds.READ)
        {
            slots.status(slot, WorkCompletionStatus.SUCCESS.ordinal());
            reference.status[slot] = WorkCompletionStatus.SUCCESS.ordinal();
        }
    }

    // SendCompletions.onNack, RNR: count a retry and wait
    private static void rnr(final int slot, final long now, final SendSlots slots, final SendSlotsReference reference)
    {
        if (slots.kind(slot) == SendSlots.FREE || slots.status(slot) != SendSlots.PENDING || slots.rnrWaiting(slot))
        {
            return;
        }
        slots.unhold(slot);
        reference.unhold(slot);
        slots.rnrCount(slot, slots.rnrCount(slot) + 1);
        reference.rnrCount[slot]++;
        slots.startRnrWait(slot, now + 200);
        reference.startRnrWait(slot, now + 200);
    }

    // SendCompletions.retryRnr
    private static void retryRnr(final long now, final SendSlots slots, final SendSlotsReference reference)
    {
        for (int slot = 0; slot < slots.capacity; slot++)
        {
            if (slots.rnrWaiting(slot) && slots.outstanding(slot) == 0 &&
                slots.nextPacket(slot) == slots.packets(slot) && now >= slots.rnrRetryAt(slot))
            {
                slots.stopRnrWait(slot);
                slots.unhold(slot);
                slots.generation(slot, slots.generation(slot) + 1);
                slots.nextPacket(slot, 0);
                slots.acked(slot, 0);
                reference.stopRnrWait(slot);
                reference.unhold(slot);
                reference.generation[slot]++;
                reference.nextPacket[slot] = 0;
                reference.acked[slot] = 0;
                if (!slots.inSendQueue(slot))
                {
                    slots.enqueueSendFirst(slot);
                    reference.enqueueSendFirst(slot);
                }
            }
        }
    }

    // SendCompletions.fail: the message and the rest of its stream
    private static void fail(final int slot, final SendSlots slots, final SendSlotsReference reference)
    {
        if (slots.kind(slot) == SendSlots.FREE || slots.kind(slot) == MessageKinds.READ_RESPONSE ||
            slots.status(slot) != SendSlots.PENDING)
        {
            return;
        }
        final int failed = WorkCompletionStatus.REM_ACCESS_ERR.ordinal();
        final int flushed = WorkCompletionStatus.WR_FLUSH_ERR.ordinal();
        slots.status(slot, failed);
        slots.nextPacket(slot, slots.packets(slot));
        slots.stopRnrWait(slot);
        slots.errored(slots.stream(slot), true);
        for (int i = slots.nextInStream(slot); i != SendSlots.MISSING; i = slots.nextInStream(i))
        {
            if (slots.status(i) == SendSlots.PENDING)
            {
                slots.status(i, flushed);
                slots.nextPacket(i, slots.packets(i));
                slots.stopRnrWait(i);
            }
        }
        reference.status[slot] = failed;
        reference.nextPacket[slot] = reference.packets[slot];
        reference.stopRnrWait(slot);
        reference.errored[reference.stream[slot]] = true;
        for (int i = reference.nextInStream[slot]; i != SendSlots.MISSING; i = reference.nextInStream[i])
        {
            if (reference.status[i] == SendSlots.PENDING)
            {
                reference.status[i] = flushed;
                reference.nextPacket[i] = reference.packets[i];
                reference.stopRnrWait(i);
            }
        }
    }

    // SendCompletions.deliver, then the frees of finished slots
    private static void deliverAndFree(
        final int streamId, final SendSlots slots, final SendSlotsReference reference, final String where)
    {
        int head = slots.streamHead(streamId);
        while (head != SendSlots.MISSING && slots.status(head) != SendSlots.PENDING)
        {
            slots.unhold(head);
            slots.forget(head);
            slots.delivered(head, true);
            head = slots.nextInStream(head);
        }
        slots.streamHead(streamId, head);
        if (head == SendSlots.MISSING)
        {
            slots.streamTail(streamId, SendSlots.MISSING);
        }
        int referenceHead = reference.head[streamId];
        while (referenceHead != SendSlots.MISSING && reference.status[referenceHead] != SendSlots.PENDING)
        {
            reference.unhold(referenceHead);
            reference.forget(referenceHead);
            reference.delivered[referenceHead] = true;
            referenceHead = reference.nextInStream[referenceHead];
        }
        reference.head[streamId] = referenceHead;
        if (referenceHead == SendSlots.MISSING)
        {
            reference.tail[streamId] = SendSlots.MISSING;
        }
        for (int slot = 0; slot < slots.capacity; slot++)
        {
            final boolean finished = slots.isFinished(slot);
            assertEquals(reference.isFinished(slot), finished, where);
            if (finished)
            {
                slots.free(slot);
                reference.free(slot);
            }
        }
    }

    // the fields of READs, RNR waits and held completions, written as the connection does
    private static void rareFields(
        final SplittableRandom random,
        final int slot,
        final long now,
        final SendSlots slots,
        final SendSlotsReference reference)
    {
        final long tag = random.nextLong();
        slots.responseTag(slot, tag);
        reference.responseTag[slot] = tag;
        slots.readReceived(slot, slots.readReceived(slot) + 1);
        reference.readReceived[slot]++;
        slots.queryAt(slot, now + 7);
        reference.queryAt[slot] = now + 7;
        final int expected = random.nextInt(9);
        slots.readExpected(slot, expected);
        reference.readExpected[slot] = expected;
    }

    private static void assertSameState(
        final SendSlots slots, final SendSlotsReference reference, final SplittableRandom random, final String where)
    {
        assertEquals(reference.isAttached(), slots.isAttached(), where);
        assertEquals(reference.hasFree(), slots.hasFree(), where);
        assertEquals(reference.inUse(), slots.inUse(), where);
        assertEquals(reference.sendQueueSize(), slots.sendQueueSize(), where);
        if (slots.sendQueueSize() > 0)
        {
            assertEquals(reference.sendQueueHead(), slots.sendQueueHead(), where);
        }
        assertEquals(reference.heldCount(), slots.heldCount(), where);
        assertEquals(reference.rnrWaitingCount(), slots.rnrWaitingCount(), where);
        assertEquals(reference.messagesStarted(), slots.messagesStarted(), where);
        assertEquals(reference.readsStarted(), slots.readsStarted(), where);
        assertEquals(reference.responsesUnsent(), slots.responsesUnsent(), where);
        assertEquals(reference.isDetachable(), slots.isDetachable(), where);
        assertEquals(reference.stateBytes() > 0, slots.stateBytes() > 0, where);
        assertEquals(reference.head.length, slots.streams(), where);
        for (int streamId = 0; streamId < STREAMS; streamId++)
        {
            final String at = where + " stream " + streamId;
            assertEquals(reference.nextMsn[streamId], slots.nextMsn(streamId), at);
            assertEquals(reference.nextRsn[streamId], slots.nextRsn(streamId), at);
            assertEquals(reference.head[streamId], slots.streamHead(streamId), at);
            assertEquals(reference.tail[streamId], slots.streamTail(streamId), at);
            assertEquals(reference.errored[streamId], slots.errored(streamId), at);
        }
        for (int slot = 0; slot < slots.capacity; slot++)
        {
            final String at = where + " slot " + slot;
            assertEquals(reference.kind[slot], slots.kind(slot), at);
            assertEquals(reference.wrId[slot], slots.wrId(slot), at);
            assertEquals(reference.stream[slot], slots.stream(slot), at);
            assertEquals(reference.msn[slot], slots.msn(slot), at);
            assertEquals(reference.rsn[slot], slots.rsn(slot), at);
            assertSame(reference.region[slot], slots.region(slot), at);
            assertEquals(reference.localAddress[slot], slots.localAddress(slot), at);
            assertEquals(reference.length[slot], slots.length(slot), at);
            assertEquals(reference.remoteAddress[slot], slots.remoteAddress(slot), at);
            assertEquals(reference.rkey[slot], slots.rkey(slot), at);
            assertEquals(reference.immediate[slot], slots.immediate(slot), at);
            assertEquals(reference.messageTag[slot], slots.messageTag(slot), at);
            assertEquals(reference.responseTag[slot], slots.responseTag(slot), at);
            assertEquals(reference.signaled[slot], slots.signaled(slot), at);
            assertEquals(reference.solicited[slot], slots.solicited(slot), at);
            assertEquals(reference.packets[slot], slots.packets(slot), at);
            assertEquals(reference.nextPacket[slot], slots.nextPacket(slot), at);
            assertEquals(reference.acked[slot], slots.acked(slot), at);
            assertEquals(reference.outstanding[slot], slots.outstanding(slot), at);
            assertEquals(reference.generation[slot], slots.generation(slot), at);
            assertEquals(reference.status[slot], slots.status(slot), at);
            assertEquals(reference.delivered[slot], slots.delivered(slot), at);
            assertEquals(reference.inSendQueue[slot], slots.inSendQueue(slot), at);
            assertEquals(reference.nextInStream[slot], slots.nextInStream(slot), at);
            assertEquals(reference.readExpected[slot], slots.readExpected(slot), at);
            assertEquals(reference.readReceived[slot], slots.readReceived(slot), at);
            assertEquals(reference.rnrWaiting[slot], slots.rnrWaiting(slot), at);
            assertEquals(reference.rnrCount[slot], slots.rnrCount(slot), at);
            assertEquals(reference.rnrRetryAt[slot], slots.rnrRetryAt(slot), at);
            assertEquals(reference.held[slot], slots.held(slot), at);
            assertEquals(reference.queryAt[slot], slots.queryAt(slot), at);
            assertEquals(reference.heldAt[slot], slots.heldAt(slot), at);
            assertEquals(reference.started[slot], slots.started(slot), at);
            assertEquals(reference.isFree(slot), slots.isFree(slot), at);
            assertEquals(reference.isFinished(slot), slots.isFinished(slot), at);
            assertEquals(reference.attempt(slot), slots.attempt(slot), at);
            final int packet = random.nextInt(6);
            assertEquals(reference.handle(slot, packet), slots.handle(slot, packet), at);
            final long key = SendSlots.key(slots.stream(slot), slots.msn(slot));
            assertEquals(reference.slotFor(key), slots.slotFor(key), at);
        }
    }
}
