package io.spraynic.datapath.wire;

import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A frame written through a {@link RoceFrameTemplate} is, byte for byte, the frame its writer writes with the
 * settings it captured and the same per-frame fields, over thousands of random settings (IPv4 and IPv6, tagged or
 * not, every header field the writer has), per-frame fields and payloads, in a buffer of noise: nothing outside the
 * frame is touched. Changing the writer after a capture (another flow using it) changes nothing the template writes.
 */
class RoceFrameTemplateTest
{
    private static final int[] OPCODES = {
        SprayOpcodes.WRITE, SprayOpcodes.WRITE_WITH_IMMEDIATE, SprayOpcodes.SEND, SprayOpcodes.SEND_WITH_IMMEDIATE,
        SprayOpcodes.READ_REQUEST, SprayOpcodes.READ_RESPONSE, Opcode.RC_SEND_ONLY, Opcode.RC_SEND_FIRST,
    };
    private static final int OFFSET = 7;
    private static final int BUFFER = 2048;

    private final SplittableRandom random = new SplittableRandom(13_2026);

    @Test
    void writesTheFramesItsWriterWritesForTheSettingsItCaptured()
    {
        final RoceFrameWriter writer = new RoceFrameWriter(SprayOpcodes.TABLE);
        final RoceFrameWriter reference = new RoceFrameWriter(SprayOpcodes.TABLE);
        final RoceFrameTemplate template = writer.template();
        final MemorySegment written = MemorySegment.ofArray(new byte[BUFFER]);
        final MemorySegment expected = MemorySegment.ofArray(new byte[BUFFER]);
        final long flow = 42;
        int captures = 0;
        int ipv6Frames = 0;
        int taggedFrames = 0;
        int paddedToMinimum = 0;
        int identification = 0;
        for (int frame = 0; frame < 20_000; frame++)
        {
            if (frame == 0 || random.nextInt(8) == 0)
            {
                final long seed = random.nextLong();
                settings(writer, new SplittableRandom(seed));
                settings(reference, new SplittableRandom(seed));
                identification = random.nextInt(0x10000);
                writer.ipv4Identification(identification);
                writer.opcode(OPCODES[random.nextInt(OPCODES.length)]);
                template.capture(flow, seed);
                captures++;
                assertTrue(template.heldBy(flow, seed));
                assertFalse(template.heldBy(flow, seed + 1));
                assertFalse(template.heldBy(flow + 1, seed));
            }
            if (random.nextInt(4) == 0)
            {
                settings(writer, random); // another flow uses the writer: the template keeps the captured one
                writer.tagNext(random.nextLong(), random.nextLong()).clearTag();
            }
            final int opcode = OPCODES[random.nextInt(OPCODES.length)];
            final int extensions = SprayOpcodes.TABLE.extensionHeadersLength(opcode);
            final boolean payloadAllowed = (SprayOpcodes.TABLE.entry(opcode) & OpcodeTable.HAS_PAYLOAD) != 0;
            final int payload = payloadAllowed ? random.nextInt(0, 300) : 0;
            final int sourcePort = random.nextInt(0x10000);
            final boolean solicited = random.nextBoolean();
            final boolean ackReq = random.nextBoolean();
            final int psn = random.nextInt();

            final long noise = random.nextLong();
            fillWithNoise(written, noise);
            fillWithNoise(expected, noise);
            final int headerLength = template.headerLength();
            for (int i = 0; i < extensions + payload; i++)
            {
                final byte value = (byte)random.nextInt(256);
                written.set(ValueLayout.JAVA_BYTE, OFFSET + headerLength + i, value);
                expected.set(ValueLayout.JAVA_BYTE, OFFSET + headerLength + i, value);
            }
            final int length = template.write(written, OFFSET, sourcePort, opcode, solicited, ackReq, psn, extensions,
                payload);
            assertEquals(template.frameLength(extensions, payload), length);

            reference.ipv4Identification(identification).udpSourcePort(sourcePort).opcode(opcode)
                .solicited(solicited).ackReq(ackReq).psn(psn);
            assertEquals(reference.payloadOffset(), headerLength + extensions, "frame " + frame);
            assertEquals(reference.writeFrame(expected, OFFSET, payload), length, "frame " + frame);

            final long differs = expected.mismatch(written);
            if (differs >= 0)
            {
                fail("frame " + frame + " (length " + length + ", header " + headerLength + ") differs at byte " +
                    (differs - OFFSET));
            }
            ipv6Frames += headerLength == 74 || headerLength == 78 ? 1 : 0;
            taggedFrames += headerLength == 58 || headerLength == 78 ? 1 : 0;
            paddedToMinimum += length > headerLength + extensions + payload + ((-payload) & 3) + Icrc.LENGTH ? 1 : 0;
        }
        assertTrue(captures > 2_000, "captures " + captures);
        assertTrue(ipv6Frames > 5_000 && taggedFrames > 5_000 && paddedToMinimum > 500,
            ipv6Frames + " IPv6, " + taggedFrames + " tagged, " + paddedToMinimum + " padded to the minimum");
    }

    @Test
    void aReleasedTemplateIsHeldByNoFlow()
    {
        final RoceFrameWriter writer = new RoceFrameWriter(SprayOpcodes.TABLE);
        final RoceFrameTemplate template = writer.template();
        final long flow = 7;
        assertFalse(template.heldBy(flow, 0), "nothing captured yet");
        assertFalse(template.heldBy(Long.MIN_VALUE, 0), "the number of no flow");
        writer.opcode(SprayOpcodes.SEND);
        template.capture(flow, 5);
        assertTrue(template.heldBy(flow, 5));
        template.release();
        assertFalse(template.heldBy(flow, 5));
        assertTrue(writer.template() == template, "one template per writer");
    }

    // every setting the writer has that the template takes, at random
    private static void settings(final RoceFrameWriter writer, final SplittableRandom random)
    {
        writer.ethernet(random.nextLong() & 0xFFFF_FFFF_FFFFL, random.nextLong() & 0xFFFF_FFFF_FFFFL)
            .vlan(random.nextBoolean() ? -1 : random.nextInt(0x10000));
        if (random.nextBoolean())
        {
            writer.ipv4(random.nextInt(), random.nextInt());
        }
        else
        {
            writer.ipv6(random.nextLong(), random.nextLong(), random.nextLong(), random.nextLong())
                .ipv6UdpChecksum(random.nextBoolean())
                .flowLabel(random.nextInt());
        }
        writer.dscp(random.nextInt(64)).ecn(random.nextInt(4)).ttl(random.nextInt(256))
            .pkey(random.nextInt(0x10000)).migReq(random.nextBoolean()).resv8a(random.nextInt(256))
            .destQp(random.nextInt())
            .minimumFrameLength(random.nextInt(4) == 0 ? random.nextInt(0, 200) : EthernetHeader.MIN_FRAME_LENGTH);
    }

    private static void fillWithNoise(final MemorySegment buffer, final long seed)
    {
        final SplittableRandom noise = new SplittableRandom(seed);
        for (long i = 0; i < buffer.byteSize(); i += Long.BYTES)
        {
            buffer.set(ValueLayout.JAVA_LONG_UNALIGNED, i, noise.nextLong());
        }
    }
}
