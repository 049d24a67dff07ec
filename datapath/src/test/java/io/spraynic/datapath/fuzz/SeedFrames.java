package io.spraynic.datapath.fuzz;

import io.spraynic.datapath.wire.EthernetHeader;
import io.spraynic.datapath.wire.FrameClass;
import io.spraynic.datapath.wire.Opcode;
import io.spraynic.datapath.wire.OpcodeTable;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceFrameWriter;
import io.spraynic.datapath.wire.RoceParser;
import io.spraynic.datapath.wire.SprayOpcodes;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The valid frames a {@link FrameMutator} starts from: what a live connection actually sent (offered by a tap
 * on the wire, a few per opcode and plane), completed with frames built by the real {@link RoceFrameWriter}
 * for every spray opcode the connection did not send (its extension headers taken from a captured frame
 * where one has as many bytes) and for the RoCEv2 RC opcodes, all addressed as the captured frames are
 * (same MACs, addresses, UDP source port and destination CID).
 */
public final class SeedFrames
{
    private static final int PER_OPCODE_AND_PLANE = 2;
    private static final int[] RC_OPCODES = {Opcode.RC_SEND_ONLY, Opcode.RC_SEND_ONLY_WITH_IMMEDIATE,
        Opcode.RC_RDMA_WRITE_ONLY, Opcode.RC_RDMA_WRITE_FIRST, Opcode.RC_RDMA_READ_REQUEST,
        Opcode.RC_RDMA_READ_RESPONSE_ONLY, Opcode.RC_ACKNOWLEDGE};

    private final RoceParser parser = new RoceParser(SprayOpcodes.TABLE, new ParseCounters(), true);
    private final RoceFrame frame = new RoceFrame();
    private final Map<Long, List<byte[]>> captured = new TreeMap<>(); // (plane << 8 | opcode) -> frames

    /**
     * Keeps the frame if it is RoCEv2 and its opcode has fewer than a few on its plane (tap thread).
     *
     * @param destinationCid only frames to this CID are kept, and CONNECTs (CID 0).
     */
    public synchronized void offer(final int plane, final MemorySegment memory, final long offset, final int length,
        final int destinationCid)
    {
        if (parser.parse(memory, offset, length, frame) != FrameClass.ROCE ||
            (frame.destQp() != destinationCid && frame.opcode() != SprayOpcodes.CONNECT))
        {
            return;
        }
        final List<byte[]> frames = captured.computeIfAbsent((long)plane << 8 | frame.opcode(), k -> new ArrayList<>());
        if (frames.size() < PER_OPCODE_AND_PLANE)
        {
            frames.add(memory.asSlice(offset, length).toArray(ValueLayout.JAVA_BYTE));
        }
    }

    /** @return the opcodes captured, by name. */
    public synchronized TreeSet<String> capturedOpcodes()
    {
        final TreeSet<String> names = new TreeSet<>();
        captured.keySet().forEach(k -> names.add(name((int)(k & 0xFF))));
        return names;
    }

    /**
     * @param cid the destination CID synthesized frames carry.
     * @return captured frames, then built ones for the spray opcodes not captured and for RoCEv2 RC.
     */
    public synchronized List<FrameMutator.Seed> seeds(final int cid)
    {
        final List<FrameMutator.Seed> seeds = new ArrayList<>();
        final TreeSet<Integer> planes = new TreeSet<>();
        captured.forEach((key, frames) ->
        {
            final int plane = (int)(key >>> 8);
            planes.add(plane);
            for (final byte[] f : frames)
            {
                seeds.add(new FrameMutator.Seed(name((int)(key & 0xFF)), plane, f));
            }
        });
        for (final int plane : planes)
        {
            final byte[] template = template(plane);
            if (null == template)
            {
                continue;
            }
            for (final int opcode : FrameMutator.sprayOpcodes())
            {
                if (!captured.containsKey((long)plane << 8 | opcode))
                {
                    seeds.add(new FrameMutator.Seed(name(opcode) + " (built)", plane,
                        build(template, SprayOpcodes.TABLE, opcode, cid, extensionBytes(opcode))));
                }
            }
            for (final int opcode : RC_OPCODES)
            {
                seeds.add(new FrameMutator.Seed("RC 0x" + Integer.toHexString(opcode) + " (built)", plane,
                    build(template, OpcodeTable.ROCE_V2, opcode, cid, null)));
            }
        }
        return seeds;
    }

    private static String name(final int opcode)
    {
        final String name = SprayOpcodes.name(opcode);
        return null == name ? "0x" + Integer.toHexString(opcode) : name;
    }

    // a captured data frame of the plane (its addresses are what every built frame carries)
    private byte[] template(final int plane)
    {
        for (final int opcode : new int[]{SprayOpcodes.WRITE, SprayOpcodes.WRITE_WITH_IMMEDIATE, SprayOpcodes.ACK})
        {
            final List<byte[]> frames = captured.get((long)plane << 8 | opcode);
            if (null != frames && !frames.isEmpty())
            {
                return frames.get(0);
            }
        }
        return null;
    }

    // extension header bytes for an opcode not captured: those of a captured frame with at least as many, else zeros
    private byte[] extensionBytes(final int opcode)
    {
        final int length = SprayOpcodes.TABLE.extensionHeadersLength(opcode);
        final byte[] bytes = new byte[length];
        for (final List<byte[]> frames : captured.values())
        {
            final byte[] f = frames.get(0);
            final MemorySegment s = MemorySegment.ofArray(f);
            if (parser.parse(s, 0, f.length, frame) == FrameClass.ROCE && frame.customHeaderLength() >= length)
            {
                MemorySegment.copy(s, ValueLayout.JAVA_BYTE, frame.customHeaderOffset(), bytes, 0, length);
                return bytes;
            }
        }
        return bytes;
    }

    private byte[] build(final byte[] template, final OpcodeTable table, final int opcode, final int cid,
        final byte[] extension)
    {
        final MemorySegment t = MemorySegment.ofArray(template);
        if (parser.parse(t, 0, template.length, frame) != FrameClass.ROCE || frame.ipVersion() != 4)
        {
            throw new IllegalStateException("template frame does not parse as IPv4 RoCEv2");
        }
        final RoceFrameWriter writer = new RoceFrameWriter(table)
            .ethernet(EthernetHeader.sourceMac(t, 0), EthernetHeader.destinationMac(t, 0))
            .ipv4(frame.ipv4Source(), frame.ipv4Destination()).udpSourcePort(frame.udpSourcePort())
            .destQp(cid).psn(frame.psn()).opcode(opcode).ackReq(true);
        final int entry = table.entry(opcode);
        if ((entry & OpcodeTable.HAS_RETH) != 0)
        {
            writer.reth(0x1000, 0x1234, 64);
        }
        if ((entry & OpcodeTable.HAS_IMMDT) != 0)
        {
            writer.immediate(0x5EED);
        }
        if ((entry & OpcodeTable.HAS_AETH) != 0)
        {
            writer.aeth(0, 1);
        }
        final int payload = (entry & OpcodeTable.HAS_PAYLOAD) != 0 ? 64 : 0;
        final MemorySegment out = MemorySegment.ofArray(new byte[writer.frameLength(payload)]);
        if (null != extension)
        {
            MemorySegment.copy(extension, 0, out, ValueLayout.JAVA_BYTE, writer.payloadOffset() - extension.length,
                extension.length);
        }
        for (int i = 0; i < payload; i++)
        {
            out.set(ValueLayout.JAVA_BYTE, writer.payloadOffset() + i, (byte)i);
        }
        final int length = writer.writeFrame(out, 0, payload);
        return out.asSlice(0, length).toArray(ValueLayout.JAVA_BYTE);
    }
}
