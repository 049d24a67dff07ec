package io.spraynic.datapath.wire;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Property tests over random and mutated frames (seeded, reproducible): the parser never throws, never
 * reads outside the frame (each frame is parsed from heap and native segments sized exactly to it, so a
 * stray read throws IndexOutOfBoundsException), gives the same answer for both, and adds one to exactly
 * one counter, the one matching its outcome. Well-formed results keep their offsets inside the frame.
 */
class RoceParserPropertyTest
{
    private static final int MUTATED_PER_SEED = 6_000;
    private static final int RANDOM_PER_SEED = 2_000;
    private static final int SEEN_VLAN = 1;
    private static final int SEEN_IPV4 = 1 << 1;
    private static final int SEEN_IPV4_OPTIONS = 1 << 2;
    private static final int SEEN_IPV6 = 1 << 3;
    private static final int SEEN_RETH = 1 << 4;
    private static final int SEEN_AETH = 1 << 5;
    private static final int SEEN_IMMEDIATE = 1 << 6;
    private static final int SEEN_ALL = (1 << 7) - 1;

    private static List<byte[]> validFrames()
    {
        final List<byte[]> frames = new ArrayList<>();
        final RoceFrameWriter writer = new RoceFrameWriter();
        final MemorySegment buffer = MemorySegment.ofArray(new byte[4096]);
        for (final RoceFrameWriterTest.Spec spec : RoceFrameWriterTest.specs())
        {
            RoceFrameWriterTest.configure(writer, spec);
            final int payload = Math.min(spec.payloadLength(), 64);
            final int length = writer.writeFrame(buffer, 0, MemorySegment.ofArray(new byte[payload]), 0, payload);
            frames.add(buffer.asSlice(0, length).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
        }
        return frames;
    }

    /** The same untagged IPv4 frame with 8 bytes of NOP options between the IPv4 and UDP headers, still valid. */
    private static byte[] withIpv4Options(final byte[] frame)
    {
        final int ip = EthernetHeader.LENGTH;
        final int udp = ip + Ipv4Header.LENGTH;
        final int options = 8;
        final byte[] longer = new byte[frame.length + options];
        System.arraycopy(frame, 0, longer, 0, udp);
        Arrays.fill(longer, udp, udp + options, (byte)1);
        System.arraycopy(frame, udp, longer, udp + options, frame.length - udp);
        final MemorySegment s = MemorySegment.ofArray(longer);
        Ipv4Header.versionAndHeaderLength(s, ip, Ipv4Header.LENGTH + options);
        Ipv4Header.totalLength(s, ip, Ipv4Header.totalLength(s, ip) + options);
        Ipv4Header.updateChecksum(s, ip, Ipv4Header.LENGTH + options);
        final long icrcOffset = udp + options + UdpHeader.length(s, udp + options) - Icrc.LENGTH;
        Icrc.write(s, icrcOffset, new Icrc().compute(s, ip, 4, Ipv4Header.LENGTH + options, icrcOffset));
        return longer;
    }

    private static byte[] mutate(final byte[] original, final Random random)
    {
        byte[] frame = original.clone();
        final int mutations = 1 + random.nextInt(3);
        for (int m = 0; m < mutations; m++)
        {
            switch (random.nextInt(6))
            {
                case 0 -> // flip 1-8 bits
                {
                    final int flips = 1 + random.nextInt(8);
                    for (int i = 0; i < flips && frame.length > 0; i++)
                    {
                        frame[random.nextInt(frame.length)] ^= (byte)(1 << random.nextInt(8));
                    }
                }
                case 1 -> frame = Arrays.copyOf(frame, random.nextInt(frame.length + 1)); // truncate
                case 2 -> // extend with random bytes
                {
                    final int extra = 1 + random.nextInt(64);
                    final byte[] longer = Arrays.copyOf(frame, frame.length + extra);
                    for (int i = frame.length; i < longer.length; i++)
                    {
                        longer[i] = (byte)random.nextInt();
                    }
                    frame = longer;
                }
                case 3 -> // overwrite a 16-bit field with a boundary value
                {
                    if (frame.length >= 2)
                    {
                        final int at = random.nextInt(Math.min(frame.length - 1, 80));
                        final int[] values = {0, 1, 0xFFFF, 0x8100, 0x0800, 0x86DD, 4791, frame.length,
                            frame.length - 14, frame.length - 34, frame.length - 54, random.nextInt(0x10000)};
                        final int value = values[random.nextInt(values.length)];
                        frame[at] = (byte)(value >>> 8);
                        frame[at + 1] = (byte)value;
                    }
                }
                case 4 -> // random opcode (with the ICRC left stale, or recomputed)
                {
                    final MemorySegment s = MemorySegment.ofArray(frame);
                    final RoceFrame parsed = new RoceFrame();
                    if (new RoceParser(new ParseCounters()).parse(s, 0, frame.length, parsed) != FrameClass.NOT_OURS &&
                        parsed.hasBth())
                    {
                        frame[(int)parsed.bthOffset()] = (byte)random.nextInt(256);
                        if (random.nextBoolean())
                        {
                            frame[(int)parsed.bthOffset() + 1] = (byte)random.nextInt(256);
                        }
                        if (random.nextBoolean() && parsed.hasIcrc())
                        {
                            Icrc.write(s, parsed.icrcOffset(), new Icrc().compute(s, parsed.ipOffset(),
                                parsed.ipVersion(), parsed.ipHeaderLength(), parsed.icrcOffset()));
                        }
                    }
                }
                default -> // a random byte anywhere in the headers
                {
                    if (frame.length > 0)
                    {
                        frame[random.nextInt(Math.min(frame.length, 90))] = (byte)random.nextInt(256);
                    }
                }
            }
        }
        return frame;
    }

    private static byte[] randomFrame(final Random random, final List<byte[]> valid)
    {
        final byte[] frame = new byte[random.nextInt(200)];
        random.nextBytes(frame);
        if (random.nextBoolean() && frame.length > 0)
        {
            // keep a valid prefix so random bytes reach the deeper layers
            final byte[] base = valid.get(random.nextInt(valid.size()));
            System.arraycopy(base, 0, frame, 0, Math.min(frame.length, random.nextInt(base.length)));
        }
        return frame;
    }

    private static void check(final byte[] frame, final Arena arena, final RoceParser parser,
        final ParseCounters counters, final RoceFrame result, final String where)
    {
        final long[] before = new long[ParseCounters.SLOT_COUNT];
        for (int i = 0; i < before.length; i++)
        {
            before[i] = counters.get(i);
        }
        final FrameClass heapClass;
        final MalformedReason heapReason;
        try
        {
            heapClass = parser.parse(MemorySegment.ofArray(frame), 0, frame.length, result);
            heapReason = result.malformedReason();
            final MemorySegment nativeFrame = arena.allocate(Math.max(frame.length, 1)).asSlice(0, frame.length);
            MemorySegment.copy(MemorySegment.ofArray(frame), 0, nativeFrame, 0, frame.length);
            assertEquals(heapClass, parser.parse(nativeFrame, 0, frame.length, result), where);
            assertEquals(heapReason, result.malformedReason(), where);
        }
        catch (final RuntimeException ex)
        {
            fail(where + ": parser threw " + ex, ex);
            return;
        }
        final int slot = switch (heapClass)
        {
            case ROCE -> ParseCounters.ROCE;
            case NOT_OURS -> ParseCounters.NOT_OURS;
            case MALFORMED -> ParseCounters.slot(heapReason);
        };
        for (int i = 0; i < before.length; i++)
        {
            assertEquals(before[i] + (i == slot ? 2 : 0), counters.get(i), where + " slot " + ParseCounters.label(i));
        }
        if (heapClass == FrameClass.ROCE)
        {
            assertTrue(result.icrcValid(), where);
            assertTrue(0 <= result.ipOffset() && result.ipOffset() < result.udpOffset(), where);
            assertTrue(result.udpOffset() < result.bthOffset() && result.bthOffset() < result.payloadOffset() + 1, where);
            assertEquals(result.icrcOffset(), result.payloadOffset() + result.payloadLength() + result.padCount(), where);
            assertTrue(result.icrcOffset() + Icrc.LENGTH <= frame.length, where);
        }
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8})
    void shouldClassifyMutatedAndRandomFramesIntoExactlyOneCounterWithoutThrowing(final long seed)
    {
        final Random random = new Random(seed);
        final List<byte[]> valid = validFrames();
        final ParseCounters counters = new ParseCounters();
        final RoceParser parser = new RoceParser(counters);
        final RoceFrame result = new RoceFrame();
        try (Arena arena = Arena.ofConfined())
        {
            for (int i = 0; i < MUTATED_PER_SEED; i++)
            {
                final byte[] frame = mutate(valid.get(random.nextInt(valid.size())), random);
                check(frame, arena, parser, counters, result, "seed " + seed + " mutated #" + i + " " +
                    java.util.HexFormat.of().formatHex(frame));
            }
            for (int i = 0; i < RANDOM_PER_SEED; i++)
            {
                final byte[] frame = randomFrame(random, valid);
                check(frame, arena, parser, counters, result, "seed " + seed + " random #" + i + " " +
                    java.util.HexFormat.of().formatHex(frame));
            }
        }
        assertEquals(2L * (MUTATED_PER_SEED + RANDOM_PER_SEED), counters.total());
        // the mutations reach every layer: some frames stay valid and most reasons occur
        assertTrue(counters.get(ParseCounters.ROCE) > 0, counters.toString());
        assertTrue(counters.get(ParseCounters.NOT_OURS) > 0, counters.toString());
        assertTrue(counters.get(MalformedReason.BAD_ICRC) > 0, counters.toString());
        assertTrue(counters.get(MalformedReason.TRUNCATED_IP) > 0, counters.toString());
    }

    /**
     * Every field the parser decoded from its wide reads equals what the header flyweights read field by field at the
     * offsets the parser reported, for valid, mutated and random frames, at whatever layer the parse stopped; and the
     * IPv4 header checksum is refused exactly when {@link Ipv4Header#isChecksumValid} says it is wrong.
     *
     * @return which kinds of headers were compared (bits of {@code SEEN_*}).
     */
    private static int assertFieldsAsTheFlyweightsReadThem(final MemorySegment s, final RoceFrame result,
        final String where)
    {
        int seen = 0;
        final long frameOffset = result.frameOffset();
        if (result.frameLength() >= EthernetHeader.LENGTH)
        {
            final int l2 = EthernetHeader.headerLength(s, frameOffset, result.frameLength());
            if (l2 != 0)
            {
                assertEquals(EthernetHeader.payloadEtherType(s, frameOffset, l2), result.etherType(), where);
            }
            if (l2 == EthernetHeader.VLAN_LENGTH)
            {
                assertEquals(EthernetHeader.vlanTci(s, frameOffset), result.vlanTci(), where);
                seen |= SEEN_VLAN;
            }
        }
        final long ip = result.ipOffset();
        if (result.ipVersion() == 4)
        {
            assertEquals(Ipv4Header.headerLength(s, ip), result.ipHeaderLength(), where);
            assertEquals(Ipv4Header.tos(s, ip) >>> 2, result.dscp(), where);
            assertEquals(Ipv4Header.tos(s, ip) & 3, result.ecn(), where);
            assertEquals(Ipv4Header.ttl(s, ip), result.ttl(), where);
            assertEquals(Ipv4Header.sourceAddress(s, ip), result.ipv4Source(), where);
            assertEquals(Ipv4Header.destinationAddress(s, ip), result.ipv4Destination(), where);
            assertEquals(!Ipv4Header.isChecksumValid(s, ip, result.ipHeaderLength()),
                result.malformedReason() == MalformedReason.BAD_IPV4_CHECKSUM, where);
            seen |= result.ipHeaderLength() > Ipv4Header.LENGTH ? SEEN_IPV4_OPTIONS : SEEN_IPV4;
        }
        else if (result.ipVersion() == 6)
        {
            assertEquals(Ipv6Header.dscp(s, ip), result.dscp(), where);
            assertEquals(Ipv6Header.ecn(s, ip), result.ecn(), where);
            assertEquals(Ipv6Header.flowLabel(s, ip), result.flowLabel(), where);
            assertEquals(Ipv6Header.hopLimit(s, ip), result.ttl(), where);
            assertEquals(Ipv6Header.sourceAddressHigh(s, ip), result.ipv6SourceHigh(), where);
            assertEquals(Ipv6Header.sourceAddressLow(s, ip), result.ipv6SourceLow(), where);
            assertEquals(Ipv6Header.destinationAddressHigh(s, ip), result.ipv6DestinationHigh(), where);
            assertEquals(Ipv6Header.destinationAddressLow(s, ip), result.ipv6DestinationLow(), where);
            seen |= SEEN_IPV6;
        }
        final long udp = result.udpOffset();
        if (udp >= 0)
        {
            assertEquals(UdpHeader.sourcePort(s, udp), result.udpSourcePort(), where);
            assertEquals(UdpHeader.destinationPort(s, udp), result.udpDestinationPort(), where);
            assertEquals(UdpHeader.length(s, udp), result.udpLength(), where);
            assertEquals(UdpHeader.checksum(s, udp), result.udpChecksum(), where);
        }
        final long bth = result.bthOffset();
        if (bth >= 0)
        {
            assertEquals(BaseTransportHeader.opcode(s, bth), result.opcode(), where);
            assertEquals(BaseTransportHeader.solicited(s, bth), result.solicited(), where);
            assertEquals(BaseTransportHeader.migReq(s, bth), result.migReq(), where);
            assertEquals(BaseTransportHeader.padCount(s, bth), result.padCount(), where);
            assertEquals(BaseTransportHeader.tver(s, bth), result.tver(), where);
            assertEquals(BaseTransportHeader.pkey(s, bth), result.pkey(), where);
            assertEquals(BaseTransportHeader.resv8a(s, bth), result.resv8a(), where);
            assertEquals(BaseTransportHeader.destQp(s, bth), result.destQp(), where);
            assertEquals(BaseTransportHeader.ackReq(s, bth), result.ackReq(), where);
            assertEquals(BaseTransportHeader.psn(s, bth), result.psn(), where);
        }
        if (result.rethOffset() >= 0)
        {
            assertEquals(RdmaExtendedTransportHeader.virtualAddress(s, result.rethOffset()),
                result.rethVirtualAddress(), where);
            assertEquals(RdmaExtendedTransportHeader.rkey(s, result.rethOffset()), result.rethRkey(), where);
            assertEquals(RdmaExtendedTransportHeader.dmaLength(s, result.rethOffset()), result.rethDmaLength(), where);
            seen |= SEEN_RETH;
        }
        if (result.aethOffset() >= 0)
        {
            assertEquals(AckExtendedTransportHeader.syndrome(s, result.aethOffset()), result.aethSyndrome(), where);
            assertEquals(AckExtendedTransportHeader.msn(s, result.aethOffset()), result.aethMsn(), where);
            seen |= SEEN_AETH;
        }
        if (result.immDtOffset() >= 0)
        {
            assertEquals(ImmediateDataHeader.immediateData(s, result.immDtOffset()), result.immediateData(), where);
            seen |= SEEN_IMMEDIATE;
        }
        return seen;
    }

    @ParameterizedTest
    @ValueSource(longs = {21, 22})
    void shouldDecodeEveryFieldAsTheHeaderFlyweightsReadIt(final long seed)
    {
        final Random random = new Random(seed);
        final List<byte[]> valid = validFrames();
        for (final byte[] frame : validFrames())
        {
            if (EthernetHeader.etherType(MemorySegment.ofArray(frame), 0) == EthernetHeader.ETHER_TYPE_IPV4)
            {
                valid.add(withIpv4Options(frame));
            }
        }
        final RoceParser parser = new RoceParser(new ParseCounters());
        final RoceFrame result = new RoceFrame();
        int seen = 0;
        int seenInRoce = 0;
        for (int i = 0; i < valid.size() + MUTATED_PER_SEED + RANDOM_PER_SEED; i++)
        {
            final byte[] frame = i < valid.size() ? valid.get(i) : i < valid.size() + MUTATED_PER_SEED ?
                mutate(valid.get(random.nextInt(valid.size())), random) : randomFrame(random, valid);
            final MemorySegment s = MemorySegment.ofArray(frame);
            final FrameClass outcome = parser.parse(s, 0, frame.length, result);
            final int kinds = assertFieldsAsTheFlyweightsReadThem(s, result, "seed " + seed + " #" + i + " " +
                java.util.HexFormat.of().formatHex(frame));
            seen |= kinds;
            seenInRoce |= outcome == FrameClass.ROCE ? kinds : 0;
        }
        // not vacuous: every kind of header was compared, also in frames that parsed whole
        assertEquals(SEEN_ALL, seen, Integer.toBinaryString(seen));
        assertEquals(SEEN_ALL, seenInRoce, Integer.toBinaryString(seenInRoce));
    }

    @org.junit.jupiter.api.Test
    void shouldRefuseEveryValidFrameCutShortAtEveryLengthAsTruncatedAtTheLayerItEndsIn()
    {
        final RoceParser parser = new RoceParser(new ParseCounters());
        final RoceFrame result = new RoceFrame();
        long cuts = 0;
        long cutsShortOfTheIpEnd = 0;
        for (final byte[] frame : validFrames())
        {
            assertEquals(FrameClass.ROCE, parser.parse(MemorySegment.ofArray(frame), 0, frame.length, result));
            final long ipEnd = result.icrcOffset() + Icrc.LENGTH;
            cutsShortOfTheIpEnd += ipEnd;
            final int l2 = (int)result.ipOffset();
            for (int cut = 0; cut <= frame.length; cut++)
            {
                // a segment exactly as long as the cut: a read past it throws
                final MemorySegment exact = MemorySegment.ofArray(Arrays.copyOf(frame, cut));
                final FrameClass outcome = parser.parse(exact, 0, cut, result);
                final String where = "cut " + cut + " of " + java.util.HexFormat.of().formatHex(frame);
                if (cut >= ipEnd)
                {
                    assertEquals(FrameClass.ROCE, outcome, where); // only Ethernet padding was cut
                    continue;
                }
                assertEquals(FrameClass.MALFORMED, outcome, where);
                assertEquals(cut < l2 ? MalformedReason.TRUNCATED_ETHERNET : MalformedReason.TRUNCATED_IP,
                    result.malformedReason(), where);
                cuts++;
            }
        }
        assertEquals(cutsShortOfTheIpEnd, cuts);
    }

    @ParameterizedTest
    @ValueSource(longs = {11, 12})
    void shouldParseEveryValidFrameFromEveryOffsetInsideALargerSegment(final long seed)
    {
        final Random random = new Random(seed);
        final ParseCounters counters = new ParseCounters();
        final RoceParser parser = new RoceParser(counters);
        final RoceFrame result = new RoceFrame();
        final byte[] big = new byte[8192];
        for (final byte[] frame : validFrames())
        {
            random.nextBytes(big);
            final int offset = random.nextInt(big.length - frame.length);
            System.arraycopy(frame, 0, big, offset, frame.length);
            assertEquals(FrameClass.ROCE, parser.parse(MemorySegment.ofArray(big), offset, frame.length, result),
                () -> result.toString());
            assertTrue(result.payloadOffset() >= offset && result.icrcOffset() + 4 <= offset + frame.length);
        }
        assertEquals(counters.total(), counters.get(ParseCounters.ROCE));
    }

    /**
     * A frame reused across parses reads as one parsed fresh: the parser writes only what each parse reaches and marks
     * the rest absent (RoceFrame.clearFrom), so a frame that stops at any layer, parsed right after valid frames of
     * every kind (RETH, AETH, immediate, VLAN, IPv6, manufacturer headers), must show none of their offsets, lengths
     * or classes.
     */
    @ParameterizedTest
    @ValueSource(longs = {31, 32})
    void shouldLeaveNothingOfThePreviousFrameInAReusedResult(final long seed)
    {
        final Random random = new Random(seed);
        final List<byte[]> valid = validFrames();
        final RoceParser parser = new RoceParser(new ParseCounters());
        final RoceFrame reused = new RoceFrame();
        final java.util.EnumSet<FrameClass> classes = java.util.EnumSet.noneOf(FrameClass.class);
        final java.util.EnumSet<MalformedReason> reasons = java.util.EnumSet.noneOf(MalformedReason.class);
        for (int i = 0; i < MUTATED_PER_SEED + RANDOM_PER_SEED; i++)
        {
            final byte[] previous = valid.get(random.nextInt(valid.size()));
            assertEquals(FrameClass.ROCE, parser.parse(MemorySegment.ofArray(previous), 0, previous.length, reused));
            final byte[] frame = i < MUTATED_PER_SEED ? mutate(valid.get(random.nextInt(valid.size())), random) :
                randomFrame(random, valid);
            final MemorySegment s = MemorySegment.ofArray(frame);
            final RoceFrame fresh = new RoceFrame();
            final FrameClass outcome = parser.parse(s, 0, frame.length, fresh);
            assertEquals(outcome, parser.parse(s, 0, frame.length, reused));
            final String where = "seed " + seed + " #" + i + " after " +
                java.util.HexFormat.of().formatHex(previous) + ": " + java.util.HexFormat.of().formatHex(frame);
            assertEquals(reachedOf(fresh), reachedOf(reused), where);
            classes.add(outcome);
            if (outcome == FrameClass.MALFORMED)
            {
                reasons.add(fresh.malformedReason());
            }
        }
        // not vacuous: frames stopped at every layer
        assertEquals(java.util.EnumSet.allOf(FrameClass.class), classes);
        for (final MalformedReason reason : new MalformedReason[]{MalformedReason.TRUNCATED_ETHERNET,
            MalformedReason.TRUNCATED_IP, MalformedReason.BAD_IPV4_CHECKSUM, MalformedReason.BAD_UDP_LENGTH,
            MalformedReason.BAD_ICRC, MalformedReason.UNKNOWN_OPCODE})
        {
            assertTrue(reasons.contains(reason), reason + " never seen in " + reasons);
        }
    }

    /** What a parse reached: its class, reasons, every offset, length and version, and the groups' decoded text. */
    private static String reachedOf(final RoceFrame frame)
    {
        return frame.frameClass() + " " + frame.malformedReason() + " " + frame.notOursReason() + " vlan " +
            frame.vlanTci() + " type " + frame.etherType() + " ip " + frame.ipOffset() + "/" + frame.ipVersion() + "/" +
            frame.ipHeaderLength() + " udp " + frame.udpOffset() + " bth " + frame.bthOffset() + " deth " +
            frame.dethOffset() + " reth " + frame.rethOffset() + " atomic " + frame.atomicEthOffset() + " aeth " +
            frame.aethOffset() + " atomicAck " + frame.atomicAckEthOffset() + " imm " + frame.immDtOffset() +
            " ieth " + frame.iethOffset() + " cnp " + frame.cnpOffset() + " custom " + frame.customHeaderOffset() +
            "/" + frame.customHeaderLength() + " payload " + frame.payloadOffset() + "/" + frame.payloadLength() +
            " icrc " + frame.icrcOffset() + "/" + frame.icrcChecked() + " " + frame;
    }
}
