package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.RecordingFrameSink;
import io.spraynic.datapath.transport.TransportCounters;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.ProtectionDomain;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Issue 13: {@link SprayFrames#data} writes its data frames from the plane writer's frame template instead of
 * setting every field of the writer per packet; every frame is byte for byte the frame the old code (kept verbatim
 * in {@link SprayFramesReference}) writes in the same state. Random engines (1-3 planes, each IPv4 or IPv6, tagged
 * or not, with or without the UDP checksum over IPv6, any DSCP) with two connections sharing the plane writers,
 * random messages of every kind in their slots, and between frames what changes a template's owner or fields in
 * the running engine: the other connection's frames, probes through the same writer, the next hop's MAC, a path's
 * source port (S7.7), a full output.
 */
@Timeout(60)
class SprayFramesDataTemplateTest
{
    private static final int SLOTS = 8;
    private static final int[] MTUS = {256, 1024, 4096};

    private final SplittableRandom random = new SplittableRandom(0x5EED_13L);

    /** One connection's send side as the test drives it: new frames, the reference, and their shared state. */
    private final class Connection
    {
        final SprayConnectionConfig config;
        final SendSlots slots;
        final PathScheduler scheduler;
        final SprayFrames frames;
        final SprayFramesReference reference;
        final TransportCounters counters = SprayCounters.create();
        final int paths;
        final int planes;

        Connection(final SprayEngine engine, final SprayConfig engineConfig, final int cid, final MemoryRegion source)
        {
            planes = engineConfig.planes;
            paths = planes * random.nextInt(1, 3);
            final int mtu = MTUS[random.nextInt(MTUS.length)];
            config = new SprayConnectionConfig().cids(cid, random.nextInt(1, 0x100_0000)).keysFromCids()
                .paths(paths).mtu(mtu).streams(2);
            for (int plane = 0; plane < planes; plane++)
            {
                if (random.nextBoolean())
                {
                    config.remoteIpv6(plane, random.nextLong(), random.nextLong(), mac());
                }
                else
                {
                    config.remote(plane, random.nextInt(), mac());
                }
            }
            slots = new SendSlots(SLOTS, 2, mtu);
            scheduler = new PathScheduler(paths, engineConfig, engine.random(), random.nextInt(0x100_0000), 50_000);
            final TransportCounters[] pathCounters = new TransportCounters[paths];
            for (int path = 0; path < paths; path++)
            {
                pathCounters[path] = SprayCounters.create();
            }
            final PacketAuthenticator auth = new PacketAuthenticator(config);
            frames = new SprayFrames(engine, config, auth, counters, pathCounters, slots, scheduler);
            reference = new SprayFramesReference(engine, config, counters, slots, scheduler, auth);
            for (int i = 0; i < SLOTS; i++)
            {
                message(slots.take(), mtu, source);
            }
        }

        private void message(final int slot, final int mtu, final MemoryRegion source)
        {
            final byte kind = (byte)random.nextInt(MessageKinds.READ_RESPONSE + 1);
            final int length = random.nextInt(4) == 0 ? random.nextInt(0, 8) : random.nextInt(0, 4 * mtu + 1);
            slots.kind(slot, kind);
            slots.stream(slot, random.nextInt(2));
            slots.msn(slot, random.nextInt());
            slots.rsn(slot, random.nextInt());
            slots.length(slot, length);
            slots.region(slot, source);
            slots.localAddress(slot, source.address() + random.nextInt(0, 1024));
            slots.remoteAddress(slot, random.nextLong());
            slots.rkey(slot, random.nextInt());
            slots.immediate(slot, random.nextInt());
            slots.messageTag(slot, random.nextLong());
            slots.solicited(slot, random.nextBoolean());
            slots.rnrCount(slot, random.nextInt(4));
            slots.packets(slot, kind == MessageKinds.READ ? 1 : SendSlots.packetsFor(length, mtu));
        }
    }

    private long mac()
    {
        return random.nextLong() & 0xFFFF_FFFF_FFFFL;
    }

    @Test
    void dataFramesAreTheOldCodesByteForByte()
    {
        int compared = 0;
        int fullCompared = 0;
        for (int trial = 0; trial < 40; trial++)
        {
            final int planes = random.nextInt(1, 4);
            final SprayConfig engineConfig = new SprayConfig().planes(planes).dscp(random.nextInt(64)).seed(trial)
                .portRotation(random.nextBoolean() ? 0 : 2, 4);
            for (int plane = 0; plane < planes; plane++)
            {
                engineConfig.local(plane, random.nextInt(), mac())
                    .localIpv6(plane, random.nextLong(), random.nextLong())
                    .vlan(plane, random.nextBoolean() ? -1 : random.nextInt(0x1000))
                    .ipv6UdpChecksum(plane, random.nextBoolean());
            }
            final RecordingFrameSink output = new RecordingFrameSink(16_384);
            final ProtectionDomain pd = new ProtectionDomain();
            final SprayEngine engine = new SprayEngine(engineConfig, pd, output);
            final MemorySegment memory = Arena.ofAuto().allocate(5 * 4096 + 1024);
            for (long i = 0; i < memory.byteSize(); i++)
            {
                memory.set(ValueLayout.JAVA_BYTE, i, (byte)random.nextInt(256));
            }
            final MemoryRegion source = pd.register(memory, AccessFlags.NONE);
            final Connection[] connections = {
                new Connection(engine, engineConfig, 1, source), new Connection(engine, engineConfig, 2, source),
            };
            for (int step = 0; step < 600; step++)
            {
                final Connection connection = connections[random.nextInt(connections.length)];
                final int path = random.nextInt(connection.paths);
                switch (random.nextInt(12))
                {
                    case 0 -> // the neighbour table resolved the plane's next hop anew
                    {
                        final int plane = random.nextInt(connection.planes);
                        final long mac = random.nextInt(3) == 0 ? connection.frames.nextHopMac(plane) : mac();
                        connection.frames.nextHopMac(plane, mac);
                        connection.reference.nextHopMac(plane, mac);
                    }
                    case 1 -> connection.scheduler.sourcePort(path, random.nextInt(0x10000)); // S7.7: a new port
                    case 2 -> connection.frames.probe(path, random.nextInt(0x100_0000), random.nextInt(256));
                    default ->
                    {
                        final int slot = random.nextInt(SLOTS);
                        final int packet = random.nextInt(connection.slots.packets(slot));
                        final long handle = connection.slots.handle(slot, packet);
                        final int payload = connection.slots.payloadOf(slot, packet);
                        final int psn = random.nextInt(0x100_0000);
                        final boolean retransmit = random.nextBoolean();
                        final boolean full = random.nextInt(16) == 0;
                        output.full = full;
                        final long framesBefore = output.commits;
                        final long fullBefore = connection.counters.get(SprayCounters.OUTPUT_FULL);
                        final boolean written = connection.frames.data(path, handle, payload, psn, retransmit, 0);
                        final byte[] frame = full ? null : output.frames.getLast();
                        final boolean referenceWritten =
                            connection.reference.data(path, handle, payload, psn, retransmit, 0);
                        output.full = false;
                        assertEquals(referenceWritten, written);
                        assertEquals(!full, written);
                        if (full)
                        {
                            assertEquals(framesBefore, output.commits, "nothing written into a full output");
                            assertEquals(fullBefore + 2, connection.counters.get(SprayCounters.OUTPUT_FULL));
                            fullCompared++;
                            continue;
                        }
                        final byte[] expected = output.frames.getLast();
                        final int differs = java.util.Arrays.mismatch(expected, frame);
                        if (differs >= 0)
                        {
                            fail("trial " + trial + " step " + step + ": kind " +
                                connection.slots.kind(slot) + ", packet " + packet + " of " +
                                connection.slots.packets(slot) + ", payload " + payload + ", path " + path +
                                ": frame of " + frame.length + " B differs from the old code's (" + expected.length +
                                " B) at byte " + differs);
                        }
                        compared++;
                    }
                }
                if (output.frames.size() > 64)
                {
                    output.frames.clear();
                }
            }
        }
        assertTrue(compared > 15_000 && fullCompared > 800, compared + " frames compared, " + fullCompared + " full");
    }
}
