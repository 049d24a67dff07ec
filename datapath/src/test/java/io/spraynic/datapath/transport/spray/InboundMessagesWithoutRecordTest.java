package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.TransportCounters;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import io.spraynic.datapath.wire.BaseTransportHeader;
import io.spraynic.datapath.wire.FrameClass;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.RdmaExtendedTransportHeader;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceParser;
import io.spraynic.datapath.wire.SprayExtendedTransportHeader;
import io.spraynic.datapath.wire.SprayOpcodes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 13: {@link InboundMessages} places and completes a message that is complete on its first packet and next
 * in its stream's MSN order without a record (no lookup, insert or remove), and looks nothing up while no record is
 * in use. Property: over random mixes of WRITE, WRITE with immediate, SEND, SEND with immediate and READ (one and
 * several packets), packets delivered in random order with duplicates and losses, MSNs near the 2^32 wrap, receives
 * posted late, short or not at all, and hostile packets (forged tags, forged MSNs inside and beyond the window,
 * changed RSNs, wrong rkeys, floods of first packets), every decision equals that of the record table it replaced
 * ({@link InboundMessagesReference}, kept verbatim): each packet's authenticity and room, every counter of the
 * message layer, its connection and its engine, the records in use, each stream's next MSN, the refusals made,
 * the receive completions in order, and every byte placed (S4.4, S4.5, S4.8, S9.3, S9.4, S10.2, S12.4, S12.7).
 * <p>
 * Each of the two runs on a test bed of its own (identical, seeded): A's real packets of the same messages are
 * captured there and handed to a message layer built beside B's connection, through its control packets.
 */
@Timeout(120)
class InboundMessagesWithoutRecordTest
{
    private static final int MTU = 1024;
    private static final int MESSAGES = 40;
    private static final int MAX_LENGTH = 3 * MTU + 100;
    private static final int STREAMS = 4;
    private static final int SMALL_CAPACITY = 8; // records (7 in the window, 1 in reserve): floods fill them
    private static final int CAPACITY = 64; // room for every message of a trial
    private static final long SETH = SprayTestBed.DATA_OFFSET_BTH + BaseTransportHeader.LENGTH;
    private static final WorkRequestOpcode[] KINDS = {
        WorkRequestOpcode.RDMA_WRITE, WorkRequestOpcode.RDMA_WRITE_WITH_IMM, WorkRequestOpcode.SEND,
        WorkRequestOpcode.SEND_WITH_IMM, WorkRequestOpcode.RDMA_READ,
    };

    @Test
    void shouldDecideEveryPacketAsTheRecordTableDid()
    {
        final SplittableRandom seeds = new SplittableRandom(13);
        long completed = 0;
        long receives = 0;
        for (int trial = 0; trial < 16; trial++)
        {
            final long[] done = runTrial(trial, seeds.nextLong(), trial % 4 == 3 ? SMALL_CAPACITY : CAPACITY);
            completed += done[0];
            receives += done[1];
        }
        // the trials did what they are for: most messages completed, receives among them
        assertTrue(completed > 16 * MESSAGES / 2, "messages completed: " + completed);
        assertTrue(receives > 16 * 4, "receives completed: " + receives);
    }

    private static long[] runTrial(final int trial, final long seed, final int capacity)
    {
        try (Side actual = new Side(seed, false, capacity); Side expected = new Side(seed, true, capacity))
        {
            assertEquals(expected.captured.size(), actual.captured.size(), "the same packets were sent");
            final SplittableRandom random = new SplittableRandom(seed ^ 0x5EEDL);
            // near the top of the MSN space half the time, so that streams wrap
            final int firstMsn = random.nextBoolean() ? -random.nextInt(MESSAGES / STREAMS) : random.nextInt(1 << 30);
            actual.startAt(firstMsn);
            expected.startAt(firstMsn);
            final double lossRate = new double[] {0.0, 0.05, 0.3}[random.nextInt(3)];

            int nextReceive = 0;
            for (int stream = 0; stream < STREAMS; stream++)
            {
                for (int i = 0; i < actual.consumers[stream]; i++)
                {
                    if (random.nextInt(10) < 8)
                    {
                        final int length = random.nextInt(20) == 0 ? MTU / 2 : MAX_LENGTH; // sometimes too short
                        actual.post(stream, nextReceive, length);
                        expected.post(stream, nextReceive, length);
                        nextReceive++;
                    }
                }
            }

            // delivery order: every packet, as sent, nearly or in any order, some lost; among them duplicates, late
            // and hostile ones
            final int packets = actual.captured.size();
            final int[] order = new int[packets];
            for (int i = 0; i < packets; i++)
            {
                order[i] = i;
            }
            final int ordering = trial % 3; // 0: as sent; 1: nearly (neighbours swapped); 2: any order
            for (int i = packets - 1; i > 0; i--)
            {
                final int j = ordering == 2 ? random.nextInt(i + 1) : ordering == 1 && random.nextInt(4) == 0 ? i - 1 : i;
                final int swap = order[i];
                order[i] = order[j];
                order[j] = swap;
            }
            int cursor = 0;
            final int steps = 3 * packets;
            for (int step = 0; step < steps; step++)
            {
                final String where = "trial " + trial + " step " + step;
                final int action = random.nextInt(100);
                if (action < 70 && cursor < packets)
                {
                    final int packet = order[cursor++];
                    if (random.nextDouble() >= lossRate)
                    {
                        deliver(actual, expected, packet, Mutation.NONE, 0, random.nextInt(10) != 0, where);
                    }
                }
                else if (action < 82)
                {
                    // a duplicate, or a retransmission of one lost (a copy moved paths, S7.4)
                    deliver(actual, expected, random.nextInt(packets), Mutation.NONE, 0, true, where);
                }
                else if (action < 92)
                {
                    final Mutation mutation = Mutation.values()[1 + random.nextInt(Mutation.values().length - 1)];
                    final int msnShift = random.nextInt(capacity + 6) - 3;
                    deliver(actual, expected, random.nextInt(packets), mutation, msnShift, true, where);
                }
                else if (action < 93)
                {
                    // a flood of first packets of new messages beyond the next one, as a peer could send
                    final int packet = random.nextInt(packets);
                    for (int shift = 1; shift <= SMALL_CAPACITY + 2; shift++)
                    {
                        deliver(actual, expected, packet, Mutation.MSN, shift, true, where + " flood " + shift);
                    }
                }
                else if (action < 95 && trial % 2 == 1) // half the trials: a refused WRITE puts its stream in error
                {
                    // the WRITE and READ target deregistered, or registered again under its keys with or without
                    // the right to write it: the rkey's region as the domain answers now, never as it was
                    final int access = random.nextInt(3) == 0 ? AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_READ :
                        AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ;
                    actual.toggleTarget(access);
                    expected.toggleTarget(access);
                    compare(actual, expected, where + " target " + actual.writeTarget.isRegistered());
                }
                else if (action < 97)
                {
                    final int stream = random.nextInt(STREAMS);
                    final int msn = actual.nextMsn(stream) + random.nextInt(SMALL_CAPACITY + 4) - 4;
                    actual.records.answerQuery(stream, msn);
                    expected.records.answerQuery(stream, msn);
                    compare(actual, expected, where + " query " + stream + "/" + msn);
                }
                else
                {
                    // a receive posted late: a refused (RNR) message's retry can find it
                    final int stream = random.nextInt(STREAMS);
                    actual.post(stream, nextReceive, MAX_LENGTH);
                    expected.post(stream, nextReceive, MAX_LENGTH);
                    nextReceive++;
                    compare(actual, expected, where + " post");
                }
            }
            // then every packet again, in order (the sender's retries after losses and refusals)
            if (actual.writeTarget.isRegistered() &&
                !AccessFlags.allows(actual.writeTarget.access(), AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ))
            {
                actual.toggleTarget(-1); // deregistered, then registered with every right below
                expected.toggleTarget(-1);
            }
            if (!actual.writeTarget.isRegistered())
            {
                actual.toggleTarget(-1);
                expected.toggleTarget(-1);
            }
            for (int round = 0; round < 3; round++)
            {
                for (int packet = 0; packet < packets; packet++)
                {
                    deliver(actual, expected, packet, Mutation.NONE, 0, true,
                        "trial " + trial + " retry " + round + "/" + packet);
                }
            }
            assertEquals(-1L, actual.written.segment().mismatch(expected.written.segment()), "WRITE bytes placed");
            assertEquals(-1L, actual.received.segment().mismatch(expected.received.segment()), "SEND bytes placed");
            return new long[] {actual.counters.get(SprayCounters.MESSAGES_RECEIVED), actual.completions.size()};
        }
    }

    private enum Mutation
    {
        NONE, TAG, MSN, RSN, RKEY
    }

    private static void deliver(
        final Side actual, final Side expected, final int packet, final Mutation mutation, final int msnShift,
        final boolean responseRoom, final String where)
    {
        final String actualOutcome = actual.deliver(packet, mutation, msnShift, responseRoom);
        final String expectedOutcome = expected.deliver(packet, mutation, msnShift, responseRoom);
        final String at = where + " packet " + packet + " " + mutation + " " + msnShift;
        assertEquals(expectedOutcome, actualOutcome, at);
        compare(actual, expected, at);
    }

    private static void compare(final Side actual, final Side expected, final String where)
    {
        assertEquals(expected.records.inUse(), actual.records.inUse(), where + ": records in use");
        for (int stream = 0; stream < STREAMS; stream++)
        {
            assertEquals(expected.nextMsn(stream), actual.nextMsn(stream), where + ": next MSN of " + stream);
        }
        assertEquals(expected.refusals.made(), actual.refusals.made(), where + ": refusals made");
        assertArrayEquals(values(expected.counters), values(actual.counters), where + ": message layer counters");
        for (int path = 0; path < expected.pathCounters.length; path++)
        {
            assertArrayEquals(values(expected.pathCounters[path]), values(actual.pathCounters[path]),
                where + ": counters of path " + path);
        }
        assertArrayEquals(expected.connectionCounters(), actual.connectionCounters(), where + ": connection counters");
        assertArrayEquals(expected.engineCounters(), actual.engineCounters(), where + ": engine counters");
        expected.drainCompletions();
        actual.drainCompletions();
        assertEquals(expected.completions, actual.completions, where + ": receive completions");
    }

    private static long[] values(final TransportCounters counters)
    {
        final long[] values = new long[SprayCounters.SLOT_COUNT];
        for (int slot = 0; slot < values.length; slot++)
        {
            values[slot] = counters.get(slot);
        }
        return values;
    }

    /** The calls {@link DataReceiver} makes of a message layer, on the new one or the reference. */
    private interface Records
    {
        boolean authentic(RoceFrame frame, long tag, byte kind, int stream, int msn, long key, int offset);

        int roomFor(byte kind, int stream, int msn, long key, int packet, int attempt, boolean responseRoom);

        void accept(RoceFrame frame, int path, byte kind, int stream, int msn, long key, int offset, int length,
            int payloadLength, int room, long now);

        int post(int stream, ReceiveWorkRequest request);

        void answerQuery(int stream, int msn);

        int inUse();
    }

    /** One test bed whose A sent the messages, and a message layer beside B's connection to hand them to. */
    private static final class Side implements AutoCloseable
    {
        final SprayTestBed bed;
        final List<byte[]> captured = new ArrayList<>();
        final int[] consumers = new int[STREAMS]; // receive-consuming messages per stream
        final MemoryRegion written;
        final MemoryRegion received;
        MemoryRegion writeTarget; // what written's rkey names now (deregistered, or registered again under its keys)
        final TransportCounters counters = SprayCounters.create();
        final TransportCounters[] pathCounters;
        final Refusals refusals = new Refusals();
        final PacketAuthenticator auth;
        final Records records;
        final Object target; // the message layer itself, for its streams' next MSNs
        final List<String> completions = new ArrayList<>();
        final RoceParser parser = new RoceParser(SprayOpcodes.TABLE, new ParseCounters(), false);
        final ReceiveWorkRequest receive = new ReceiveWorkRequest();
        final long[] connectionStart;
        final long[] engineStart;
        private boolean capturing = true;

        Side(final long seed, final boolean reference, final int capacity)
        {
            final SprayTestBed.Options options = new SprayTestBed.Options().mtu(MTU).wrapA((plane, port) ->
            {
                final SprayTestBed.SwitchablePort watched = new SprayTestBed.SwitchablePort(port);
                watched.corrupt = (memory, offset, length) ->
                {
                    if (capturing && length > SETH && SprayOpcodes.isData(BaseTransportHeader.opcode(memory,
                        offset + SprayTestBed.DATA_OFFSET_BTH)))
                    {
                        captured.add(memory.asSlice(offset, length).toArray(ValueLayout.JAVA_BYTE));
                    }
                    return false;
                };
                return watched;
            });
            bed = new SprayTestBed(options);
            final long size = (long)MESSAGES * MAX_LENGTH;
            final MemoryRegion src = bed.region(bed.pdA, size, AccessFlags.NONE, 7);
            final MemoryRegion readInto = bed.region(bed.pdA, size, AccessFlags.LOCAL_WRITE, 0);
            written = bed.region(bed.pdB, size,
                AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ, 5);
            received = bed.region(bed.pdB, 4 * size, AccessFlags.LOCAL_WRITE, 0);
            writeTarget = written;

            // A sends a random mix (the same on both beds); B's own connection takes it as it comes
            final SplittableRandom random = new SplittableRandom(seed);
            final SendWorkRequest wr = new SendWorkRequest();
            for (int i = 0; i < MESSAGES; i++)
            {
                final WorkRequestOpcode op = KINDS[random.nextInt(KINDS.length)];
                final int stream = random.nextInt(STREAMS);
                final int pick = random.nextInt(10);
                final int length = pick < 5 ? random.nextInt(MTU + 1) : pick < 6 ? MTU : random.nextInt(MAX_LENGTH + 1);
                final long at = (long)i * MAX_LENGTH;
                final MemoryRegion local = op == WorkRequestOpcode.RDMA_READ ? readInto : src;
                wr.reset().wrId(i).opcode(op).local(local, local.address() + at, length)
                    .remote(written.address() + at, written.rkey()).immediate(1000 + i);
                assertEquals(PostResult.OK, bed.a.postSend(stream, wr));
                if (op == WorkRequestOpcode.SEND || op == WorkRequestOpcode.SEND_WITH_IMM ||
                    op == WorkRequestOpcode.RDMA_WRITE_WITH_IMM)
                {
                    assertEquals(PostResult.OK, bed.b.postReceive(stream, receive.reset().wrId(i)
                        .buffer(received, received.address() + at, MAX_LENGTH)));
                    consumers[stream]++;
                }
            }
            assertEquals(MESSAGES, bed.sendCompletionsA(MESSAGES).size());
            capturing = false;
            SprayTestBed.drain(bed.receiveCqB);
            written.segment().fill((byte)0);
            received.segment().fill((byte)0);
            assertTrue(bed.b.holdsStorage(), "B's send slots are there for READ responses");

            final SprayConnectionConfig config = bed.responderConfig().depths(1024, 1024, capacity)
                .cids(SprayTestBed.CID_B, SprayTestBed.CID_A);
            pathCounters = new TransportCounters[bed.options.paths];
            for (int path = 0; path < pathCounters.length; path++)
            {
                pathCounters[path] = SprayCounters.create();
            }
            auth = bed.b.authenticator();
            final PlacementMarks marks = new PlacementMarks(config.placementChunks);
            if (reference)
            {
                final InboundMessagesReference layer = new InboundMessagesReference(bed.b, bed.b.control(),
                    bed.engineB, config, counters, pathCounters, auth, marks, refusals);
                layer.attach(new InboundMessagesReference.Storage(capacity, config.receiveQueueDepth));
                target = layer;
                records = new Records()
                {
                    public boolean authentic(final RoceFrame frame, final long tag, final byte kind, final int stream,
                        final int msn, final long key, final int offset)
                    {
                        return layer.authentic(frame, tag, kind, stream, msn, key, offset);
                    }

                    public int roomFor(final byte kind, final int stream, final int msn, final long key,
                        final int packet, final int attempt, final boolean responseRoom)
                    {
                        return layer.roomFor(kind, stream, msn, key, packet, attempt, responseRoom);
                    }

                    public void accept(final RoceFrame frame, final int path, final byte kind, final int stream,
                        final int msn, final long key, final int offset, final int length, final int payloadLength,
                        final int room, final long now)
                    {
                        layer.accept(frame, path, kind, stream, msn, key, offset, length, payloadLength, room, now);
                    }

                    public int post(final int stream, final ReceiveWorkRequest request)
                    {
                        return layer.post(stream, request);
                    }

                    public void answerQuery(final int stream, final int msn)
                    {
                        layer.answerQuery(stream, msn);
                    }

                    public int inUse()
                    {
                        return layer.inUse();
                    }
                };
            }
            else
            {
                final InboundMessages layer = new InboundMessages(bed.b, bed.b.control(), bed.engineB, config,
                    counters, pathCounters, auth, marks, refusals);
                layer.attach(new InboundMessages.Storage(capacity, config.receiveQueueDepth));
                target = layer;
                records = new Records()
                {
                    public boolean authentic(final RoceFrame frame, final long tag, final byte kind, final int stream,
                        final int msn, final long key, final int offset)
                    {
                        return layer.authentic(frame, tag, kind, stream, msn, key, offset);
                    }

                    public int roomFor(final byte kind, final int stream, final int msn, final long key,
                        final int packet, final int attempt, final boolean responseRoom)
                    {
                        return layer.roomFor(kind, stream, msn, key, packet, attempt, responseRoom);
                    }

                    public void accept(final RoceFrame frame, final int path, final byte kind, final int stream,
                        final int msn, final long key, final int offset, final int length, final int payloadLength,
                        final int room, final long now)
                    {
                        layer.accept(frame, path, kind, stream, msn, key, offset, length, payloadLength, room, now);
                    }

                    public int post(final int stream, final ReceiveWorkRequest request)
                    {
                        return layer.post(stream, request);
                    }

                    public void answerQuery(final int stream, final int msn)
                    {
                        layer.answerQuery(stream, msn);
                    }

                    public int inUse()
                    {
                        return layer.inUse();
                    }
                };
            }
            connectionStart = values(bed.b.counters());
            engineStart = values(bed.engineB.counters());
        }

        /**
         * Deregisters the WRITE and READ target if it is registered; else registers its memory again under its
         * keys with {@code access} (or every right, for -1).
         */
        void toggleTarget(final int access)
        {
            if (writeTarget.isRegistered())
            {
                bed.pdB.deregister(writeTarget);
            }
            else
            {
                writeTarget = bed.pdB.registerWithKeys(written.segment(), access >= 0 ? access :
                    AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ,
                    written.lkey(), written.rkey());
            }
        }

        long[] connectionCounters()
        {
            final long[] now = values(bed.b.counters());
            for (int slot = 0; slot < now.length; slot++)
            {
                now[slot] -= connectionStart[slot];
            }
            return now;
        }

        long[] engineCounters()
        {
            final long[] now = values(bed.engineB.counters());
            for (int slot = 0; slot < now.length; slot++)
            {
                now[slot] -= engineStart[slot];
            }
            return now;
        }

        private int[] nextMsns()
        {
            try
            {
                // the reference holds them itself; InboundMessages in its retirement (S4.8)
                Object holder = target;
                if (target instanceof InboundMessages)
                {
                    final Field retirement = InboundMessages.class.getDeclaredField("retirement");
                    retirement.setAccessible(true);
                    holder = retirement.get(target);
                }
                final Field field = holder.getClass().getDeclaredField("nextMsn");
                field.setAccessible(true);
                return (int[])field.get(holder);
            }
            catch (final ReflectiveOperationException ex)
            {
                throw new AssertionError(ex);
            }
        }

        /** Every stream's first MSN is {@code msn}, as if the peer had sent that many messages on it before. */
        void startAt(final int msn)
        {
            Arrays.fill(nextMsns(), msn);
            firstMsn = msn;
        }

        private int firstMsn;

        int nextMsn(final int stream)
        {
            return nextMsns()[stream];
        }

        void post(final int stream, final int index, final int length)
        {
            assertEquals(PostResult.OK, records.post(stream, receive.reset().wrId(index)
                .buffer(received, received.address() + (long)index * MAX_LENGTH, length)));
        }

        void drainCompletions()
        {
            for (final WorkCompletion wc : SprayTestBed.drain(bed.receiveCqB))
            {
                completions.add(wc.wrId() + " " + wc.status() + " " + wc.opcode() + " " + wc.byteLength() + " " +
                    wc.hasImmediate() + " " + wc.immediateData());
            }
        }

        /** Hands a copy of a captured packet, its MSN moved to this run's first and changed as told, over. */
        String deliver(final int packet, final Mutation mutation, final int msnShift, final boolean responseRoom)
        {
            final byte[] bytes = captured.get(packet);
            final MemorySegment copy = Arena.ofAuto().allocate(bytes.length);
            MemorySegment.copy(MemorySegment.ofArray(bytes), 0, copy, 0, bytes.length);
            final RoceFrame frame = new RoceFrame();
            assertEquals(FrameClass.ROCE, parser.parse(copy, 0, bytes.length, frame));
            final int opcode = frame.opcode();
            final int sentMsn = SprayExtendedTransportHeader.msn(copy, SETH);
            SprayExtendedTransportHeader.msn(copy, SETH, mutation == Mutation.MSN ?
                nextMsn(SprayExtendedTransportHeader.stream(copy, SETH)) + msnShift : firstMsn + sentMsn);
            if (mutation == Mutation.RSN)
            {
                SprayExtendedTransportHeader.rsn(copy, SETH, SprayExtendedTransportHeader.rsn(copy, SETH) + 1);
            }
            final boolean hasReth = opcode == SprayOpcodes.WRITE || opcode == SprayOpcodes.WRITE_WITH_IMMEDIATE ||
                opcode == SprayOpcodes.READ_REQUEST;
            if (mutation == Mutation.RKEY && hasReth)
            {
                final long reth = SETH + SprayExtendedTransportHeader.LENGTH;
                RdmaExtendedTransportHeader.rkey(copy, reth, RdmaExtendedTransportHeader.rkey(copy, reth) ^ 0x100);
            }
            // the peer's tag for what it now says (an authentic peer's packet), unless the tag is forged
            SprayExtendedTransportHeader.messageTag(copy, SETH, auth.expectedTag(frame) ^ (mutation == Mutation.TAG ? 1 : 0));

            // as DataReceiver.onDataPacket calls the message layer (its S4.3 checks hold for these packets)
            final int path = SprayExtendedTransportHeader.path(copy, SETH);
            final int stream = SprayExtendedTransportHeader.stream(copy, SETH);
            final int msn = SprayExtendedTransportHeader.msn(copy, SETH);
            final int offset = SprayExtendedTransportHeader.messageOffset(copy, SETH);
            final int length = SprayExtendedTransportHeader.messageLength(copy, SETH);
            final byte kind = (byte)(opcode - SprayOpcodes.WRITE);
            final long key = SendSlots.key(stream, msn);
            final long tag = SprayExtendedTransportHeader.messageTag(copy, SETH);
            if (!records.authentic(frame, tag, kind, stream, msn, key, offset))
            {
                return "not authentic";
            }
            final int room = records.roomFor(kind, stream, msn, key, offset / MTU,
                SprayExtendedTransportHeader.attempt(copy, SETH), responseRoom);
            if (room != InboundMessages.NO_ROOM)
            {
                records.accept(frame, path, kind, stream, msn, key, offset, length, frame.payloadLength(), room,
                    bed.now);
            }
            return "room " + room;
        }

        @Override
        public void close()
        {
            bed.close();
        }
    }
}
