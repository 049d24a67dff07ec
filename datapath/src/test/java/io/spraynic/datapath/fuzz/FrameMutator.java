package io.spraynic.datapath.fuzz;

import io.spraynic.datapath.wire.BaseTransportHeader;
import io.spraynic.datapath.wire.ConnectionHeader;
import io.spraynic.datapath.wire.FrameClass;
import io.spraynic.datapath.wire.Icrc;
import io.spraynic.datapath.wire.Ipv4Header;
import io.spraynic.datapath.wire.OpcodeTable;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceParser;
import io.spraynic.datapath.wire.SprayOpcodes;
import io.spraynic.datapath.wire.UdpHeader;
import io.spraynic.datapath.wire.Wire;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.IntPredicate;

/**
 * Mutates valid RoCEv2 and spray frames into hostile ones, field by field, for fuzzing a live NIC.
 * <p>
 * The layout of each seed frame comes from the real parser ({@link RoceParser} over {@link SprayOpcodes#TABLE}),
 * not from hard-coded offsets: regions Ethernet, IP, UDP, BTH, the opcode's extension headers (SETH, RETH, ImmDt,
 * SACKH, PRBH, NAKH, CONH: whatever the table says the opcode carries, so longer headers and new opcodes are
 * covered as soon as the table knows them), payload (a CONNECT's plane address list) and ICRC. The first
 * {@link #deterministicCount()} mutations take one seed of each kind (opcode) and walk every window of 1, 2, 3, 4
 * and 8 bytes at every offset of every region (the payload's first and last bytes) through boundary and absurd values (0, 1, max, max-1, the sign
 * bit, the original plus and minus one, random), then every truncation at and around each region boundary,
 * extensions, a wrong ICRC and a plain replay; after that it mutates 1 to 4 random windows at once ("havoc").
 * <p>
 * Most mutations are finished with a correct IPv4 header checksum and a correct ICRC recomputed over the mutated
 * bytes (UDP length and IHL as mutated, where they still fit the frame): those pass the parser's integrity checks
 * and reach the transport, which is the point. A mutation of the checksum or ICRC itself is left as is.
 * <p>
 * Identifiers of connections the test protects (the legitimate transfer's CIDs, in the BTH destination QP and
 * in a CONH sender CID) are replaced: the spray protocol authenticates nothing yet (issue 12, item 2), so a frame
 * that names such a CID with a valid ICRC is an attack the transport cannot tell apart, tested on its own.
 * Single-threaded; allocates only at construction.
 */
public final class FrameMutator
{
    /** A valid frame and the plane it travels on. */
    public record Seed(String name, int plane, byte[] frame)
    {
    }

    private record Region(String name, int start, int length)
    {
    }

    private static final int[] WIDTHS = {1, 2, 3, 4, 8};
    private static final int VALUES = 8;
    private static final int PAYLOAD_HEAD = 16;
    private static final int PAYLOAD_TAIL = 8;
    private static final int[] EXTENSIONS = {1, 3, 4, 64, 700};

    private final List<Seed> seeds;
    private final List<Region[]> layouts = new ArrayList<>();
    private final int[] bthOffsets;
    private final int[] ipOffsets;
    private final int[] ipVersions;
    private final int[] conhOffsets;
    private final long[] sites; // seed << 48 | region << 40 | width << 32 | position
    private final long deterministicCount;
    private final SplittableRandom random;
    private final IntPredicate protectedCid;
    private final int replacementCid;
    private final Icrc icrc = new Icrc();
    private final MemorySegment scratch = Arena.ofAuto().allocate(16_384, 8);
    private final List<Integer> truncationSeed = new ArrayList<>();
    private final List<Integer> truncationLength = new ArrayList<>();
    private long index;
    private String lastDescription = "";
    private int nextPlane;

    /**
     * @param seeds          valid frames (each must parse as RoCEv2 with {@link SprayOpcodes#TABLE}).
     * @param randomSeed     for the random values and the havoc phase.
     * @param protectedCid   CIDs no mutated frame may name.
     * @param replacementCid what such a CID is replaced with.
     */
    public FrameMutator(final List<Seed> seeds, final long randomSeed, final IntPredicate protectedCid, final int replacementCid)
    {
        if (seeds.isEmpty())
        {
            throw new IllegalArgumentException("no seed frames");
        }
        this.seeds = List.copyOf(seeds);
        this.random = new SplittableRandom(randomSeed);
        this.protectedCid = protectedCid;
        this.replacementCid = replacementCid;
        this.bthOffsets = new int[seeds.size()];
        this.ipOffsets = new int[seeds.size()];
        this.ipVersions = new int[seeds.size()];
        this.conhOffsets = new int[seeds.size()];
        final RoceParser parser = new RoceParser(SprayOpcodes.TABLE, new ParseCounters(), true);
        final RoceFrame frame = new RoceFrame();
        final List<Long> siteList = new ArrayList<>();
        final java.util.Set<String> systematicNames = new java.util.HashSet<>();
        for (int s = 0; s < seeds.size(); s++)
        {
            final byte[] bytes = seeds.get(s).frame();
            final MemorySegment segment = MemorySegment.ofArray(bytes);
            if (parser.parse(segment, 0, bytes.length, frame) != FrameClass.ROCE)
            {
                throw new IllegalArgumentException("seed " + seeds.get(s).name() + " does not parse: " + frame.frameClass() +
                    " " + frame.malformedReason());
            }
            final int ip = (int)frame.ipOffset();
            final int udp = (int)frame.udpOffset();
            final int bth = (int)frame.bthOffset();
            final int ext = bth + BaseTransportHeader.LENGTH;
            final int payload = (int)frame.payloadOffset();
            final int icrcOffset = udp + frame.udpLength() - Icrc.LENGTH;
            bthOffsets[s] = bth;
            ipOffsets[s] = ip;
            ipVersions[s] = frame.ipVersion();
            final int opcode = frame.opcode();
            conhOffsets[s] = opcode >= SprayOpcodes.CONNECT && opcode <= SprayOpcodes.CLOSE_ACK ? (int)frame.customHeaderOffset() : -1;
            final Region[] regions = {
                new Region("ethernet", 0, ip),
                new Region("ip", ip, udp - ip),
                new Region("udp", udp, UdpHeader.LENGTH),
                new Region("bth", bth, BaseTransportHeader.LENGTH),
                new Region(headerName(opcode), ext, payload - ext),
                new Region("payload", payload, icrcOffset - payload),
                new Region("icrc", icrcOffset, Icrc.LENGTH)};
            layouts.add(regions);
            // systematic walk: one seed per kind (the others, e.g. the same kind on another plane, in havoc)
            if (!systematicNames.add(seeds.get(s).name()))
            {
                continue;
            }
            for (int r = 0; r < regions.length; r++)
            {
                final Region region = regions[r];
                for (final int width : WIDTHS)
                {
                    for (int position = 0; position + width <= region.length(); position++)
                    {
                        if (region.name().equals("payload") && position >= PAYLOAD_HEAD &&
                            position + width < region.length() - PAYLOAD_TAIL)
                        {
                            continue;
                        }
                        siteList.add((long)s << 48 | (long)r << 40 | (long)width << 32 | position);
                    }
                }
                // truncations at and around each region's start and end
                for (final int cut : new int[]{region.start() - 1, region.start(), region.start() + 1,
                    region.start() + region.length() - 1})
                {
                    if (cut >= 0 && cut < bytes.length)
                    {
                        truncationSeed.add(s);
                        truncationLength.add(cut);
                    }
                }
            }
        }
        this.sites = siteList.stream().mapToLong(Long::longValue).toArray();
        this.deterministicCount = (long)sites.length * VALUES + truncationSeed.size() +
            (long)seeds.size() * (EXTENSIONS.length + 2);
    }

    private static String headerName(final int opcode)
    {
        final String name = SprayOpcodes.name(opcode);
        return null == name ? "extension headers of opcode 0x" + Integer.toHexString(opcode) : "headers of " + name;
    }

    /** @return mutations in the systematic phase; after it, havoc. */
    public long deterministicCount()
    {
        return deterministicCount;
    }

    /** @return mutations produced. */
    public long produced()
    {
        return index;
    }

    /** @return what the last mutation did, e.g. "SPRAY_ACK bth+5/3=0xffffff icrc ok". */
    public String lastDescription()
    {
        return lastDescription;
    }

    /** @return the plane the next frame should go out on. */
    public int nextPlane()
    {
        return seeds.get(seedOf(index)).plane();
    }

    private int seedOf(final long i)
    {
        if (i < (long)sites.length * VALUES)
        {
            return (int)(sites[(int)(i / VALUES)] >>> 48);
        }
        long j = i - (long)sites.length * VALUES;
        if (j < truncationSeed.size())
        {
            return truncationSeed.get((int)j);
        }
        j -= truncationSeed.size();
        if (j < (long)seeds.size() * (EXTENSIONS.length + 2))
        {
            return (int)(j / (EXTENSIONS.length + 2));
        }
        return (int)Long.remainderUnsigned(mix(i), seeds.size());
    }

    /**
     * Writes the next hostile frame.
     *
     * @return its length (at most {@code room}).
     */
    public int next(final MemorySegment memory, final long offset, final int room)
    {
        final long i = index++;
        final int s = seedOf(i);
        final byte[] seed = seeds.get(s).frame();
        final int seedLength = Math.min(seed.length, room);
        MemorySegment.copy(seed, 0, scratch, ValueLayout.JAVA_BYTE, 0, seed.length);
        int length = seedLength;
        boolean fixIcrc = true;
        final String name = seeds.get(s).name();
        final long values = (long)sites.length * VALUES;
        if (i < values)
        {
            final long site = sites[(int)(i / VALUES)];
            final int region = (int)(site >>> 40 & 0xFF);
            final int width = (int)(site >>> 32 & 0xFF);
            final int position = (int)site;
            final Region r = layouts.get(s)[region];
            final long value = value((int)(i % VALUES), width, read(r.start() + position, width));
            write(r.start() + position, width, value);
            fixIcrc = !r.name().equals("icrc") && !touchesIpChecksum(s, r.start() + position, width);
            lastDescription = name + " " + r.name() + "+" + position + "/" + width + "=0x" + Long.toHexString(value);
        }
        else if (i < values + truncationSeed.size())
        {
            length = truncationLength.get((int)(i - values));
            fixIcrc = false;
            lastDescription = name + " truncated to " + length;
        }
        else if (i < deterministicCount)
        {
            final int kind = (int)((i - values - truncationSeed.size()) % (EXTENSIONS.length + 2));
            if (kind < EXTENSIONS.length)
            {
                final int extra = Math.min(EXTENSIONS[kind], room - seedLength);
                for (int k = 0; k < extra; k++)
                {
                    scratch.set(ValueLayout.JAVA_BYTE, seedLength + k, (byte)random.nextInt());
                }
                length = seedLength + extra;
                fixIcrc = false;
                lastDescription = name + " extended by " + extra;
            }
            else if (kind == EXTENSIONS.length)
            {
                final int icrcOffset = layouts.get(s)[6].start();
                write(icrcOffset, 1, read(icrcOffset, 1) ^ 0x01);
                fixIcrc = false;
                lastDescription = name + " wrong icrc";
            }
            else
            {
                lastDescription = name + " replayed";
            }
        }
        else
        {
            length = havoc(s, seedLength, room);
            fixIcrc = !lastDescription.endsWith("!icrc");
        }
        guardProtectedCids(s, length);
        if (fixIcrc)
        {
            fixChecksums(s, length);
        }
        MemorySegment.copy(scratch, 0, memory, offset, length);
        return length;
    }

    private int havoc(final int s, final int seedLength, final int room)
    {
        final Region[] regions = layouts.get(s);
        final StringBuilder description = new StringBuilder(seeds.get(s).name()).append(" havoc");
        final int mutations = 1 + random.nextInt(4);
        boolean touchesIntegrity = false;
        for (int m = 0; m < mutations; m++)
        {
            final Region r = regions[random.nextInt(regions.length - 1)]; // the ICRC: by the finish below
            if (r.length() == 0)
            {
                continue;
            }
            final int width = Math.min(r.length(), WIDTHS[random.nextInt(WIDTHS.length)]);
            final int position = random.nextInt(r.length() - width + 1);
            final long value = value(random.nextInt(VALUES), width, read(r.start() + position, width));
            write(r.start() + position, width, value);
            touchesIntegrity |= touchesIpChecksum(s, r.start() + position, width);
            description.append(' ').append(r.name()).append('+').append(position).append('/').append(width);
        }
        int length = seedLength;
        final int finish = random.nextInt(10);
        if (finish == 0)
        {
            length = 1 + random.nextInt(seedLength);
            description.append(" truncated to ").append(length).append(" !icrc");
        }
        else if (finish == 1)
        {
            final int extra = Math.min(1 + random.nextInt(64), room - seedLength);
            length = seedLength + extra;
            description.append(" extended by ").append(extra).append(" !icrc");
        }
        else if (finish == 2 || touchesIntegrity)
        {
            description.append(" !icrc");
        }
        lastDescription = description.toString();
        return length;
    }

    private long value(final int kind, final int width, final long original)
    {
        final long max = width == 8 ? -1L : (1L << (8 * width)) - 1;
        return switch (kind)
        {
            case 0 -> 0;
            case 1 -> 1;
            case 2 -> max;
            case 3 -> max - 1;
            case 4 -> 1L << (8 * width - 1); // the sign bit
            case 5 -> (original + 1) & max;
            case 6 -> (original - 1) & max;
            default -> random.nextLong() & max;
        };
    }

    private long read(final int at, final int width)
    {
        long v = 0;
        for (int k = 0; k < width; k++)
        {
            v = v << 8 | (scratch.get(ValueLayout.JAVA_BYTE, at + k) & 0xFF);
        }
        return v;
    }

    private void write(final int at, final int width, final long value)
    {
        for (int k = 0; k < width; k++)
        {
            scratch.set(ValueLayout.JAVA_BYTE, at + k, (byte)(value >>> (8 * (width - 1 - k))));
        }
    }

    private boolean touchesIpChecksum(final int s, final int at, final int width)
    {
        final int checksum = ipOffsets[s] + Ipv4Header.CHECKSUM_OFFSET;
        return ipVersions[s] == 4 && at < checksum + 2 && at + width > checksum;
    }

    private void guardProtectedCids(final int s, final int length)
    {
        final int destQp = bthOffsets[s] + BaseTransportHeader.DEST_QP_OFFSET;
        if (destQp + 3 <= length && protectedCid.test((int)read(destQp, 3)))
        {
            write(destQp, 3, replacementCid);
        }
        final int conh = conhOffsets[s];
        if (conh >= 0 && conh + ConnectionHeader.LENGTH <= length &&
            protectedCid.test(ConnectionHeader.senderCid(scratch, conh)))
        {
            write(conh + ConnectionHeader.SENDER_CID_OFFSET, 4, replacementCid);
        }
    }

    // a correct IPv4 header checksum and ICRC over the mutated bytes, with the IHL and UDP length as mutated
    // where they still describe something inside the frame
    private void fixChecksums(final int s, final int length)
    {
        final int ip = ipOffsets[s];
        final int version = ipVersions[s];
        int ipHeaderLength = version == 4 ? 20 : 40;
        if (version == 4)
        {
            final int ihl = (scratch.get(ValueLayout.JAVA_BYTE, ip) & 0x0F) * 4;
            if (ihl >= 20 && ip + ihl <= length)
            {
                ipHeaderLength = ihl;
                scratch.set(Wire.SHORT_BE, ip + Ipv4Header.CHECKSUM_OFFSET,
                    (short)Ipv4Header.computeChecksum(scratch, ip, ihl));
            }
        }
        final int udp = ip + ipHeaderLength;
        if (udp + UdpHeader.LENGTH > length)
        {
            return;
        }
        final int udpLength = Short.toUnsignedInt(scratch.get(Wire.SHORT_BE, udp + UdpHeader.LENGTH_OFFSET));
        int icrcOffset = udp + udpLength - Icrc.LENGTH;
        if (icrcOffset < udp + UdpHeader.LENGTH + BaseTransportHeader.LENGTH || icrcOffset + Icrc.LENGTH > length)
        {
            icrcOffset = layouts.get(s)[6].start();
            if (icrcOffset + Icrc.LENGTH > length || icrcOffset < udp + UdpHeader.LENGTH + BaseTransportHeader.LENGTH)
            {
                return;
            }
        }
        Icrc.write(scratch, icrcOffset, icrc.compute(scratch, ip, version, ipHeaderLength, icrcOffset));
    }

    private static long mix(final long x)
    {
        long z = x * 0x9E37_79B9_7F4A_7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58_476D_1CE4_E5B9L;
        return z ^ (z >>> 31);
    }

    /** @return every opcode the spray table registers in 0xC0..0xCF (new ones included once registered). */
    public static List<Integer> sprayOpcodes()
    {
        final List<Integer> opcodes = new ArrayList<>();
        for (int opcode = 0xC0; opcode <= 0xCF; opcode++)
        {
            if ((SprayOpcodes.TABLE.entry(opcode) & OpcodeTable.REGISTERED) != 0)
            {
                opcodes.add(opcode);
            }
        }
        return opcodes;
    }
}
