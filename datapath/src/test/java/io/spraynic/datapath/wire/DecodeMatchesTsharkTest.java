package io.spraynic.datapath.wire;

import io.spraynic.datapath.capture.CapturedFrame;
import io.spraynic.datapath.capture.FrameDecoder;
import io.spraynic.datapath.capture.PcapReader;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Our parser and Wireshark's dissector agree on every field of every well-formed scapy vector.
 */
class DecodeMatchesTsharkTest
{
    @TempDir
    Path dir;

    @Test
    void shouldDecodeScapyVectorsAsTsharkDoes() throws Exception
    {
        Assumptions.assumeTrue(Tshark.available(), "tshark not installed (apt-get install tshark): check skipped");
        final Path capture = IcrcTest.resource("roce_vectors.pcap");
        final List<CapturedFrame> frames = PcapReader.readAll(capture);
        final List<Map<String, String>> decoded = Tshark.fields(capture, dir);
        assertEquals(frames.size(), decoded.size());
        final RoceParser parser = new RoceParser(new ParseCounters());
        final RoceFrame f = new RoceFrame();
        int compared = 0;
        for (int i = 0; i < frames.size(); i++)
        {
            final byte[] bytes = frames.get(i).data();
            if (parser.parse(MemorySegment.ofArray(bytes), 0, bytes.length, f) != FrameClass.ROCE)
            {
                continue;
            }
            final Map<String, String> t = decoded.get(i);
            final String where = "vector " + i + " " + t;
            if (f.ipVersion() == 4)
            {
                assertEquals(t.get("ip.src"), FrameDecoder.sourceIp(f), where);
                assertEquals(t.get("ip.dst"), FrameDecoder.destinationIp(f), where);
                assertEquals(Tshark.number(t.get("ip.dsfield.ecn")), f.ecn(), where);
            }
            else
            {
                assertEquals(t.get("ipv6.src"), FrameDecoder.sourceIp(f), where);
                assertEquals(t.get("ipv6.dst"), FrameDecoder.destinationIp(f), where);
                assertEquals(Tshark.number(t.get("ipv6.tclass.ecn")), f.ecn(), where);
            }
            assertEquals(Tshark.number(t.get("udp.srcport")), f.udpSourcePort(), where);
            assertEquals(Tshark.number(t.get("udp.dstport")), f.udpDestinationPort(), where);
            assertEquals(Tshark.number(t.get("infiniband.bth.opcode")), f.opcode(), where);
            assertEquals(Tshark.bool(t.get("infiniband.bth.se")), f.solicited(), where);
            assertEquals(Tshark.bool(t.get("infiniband.bth.m")), f.migReq(), where);
            assertEquals(Tshark.number(t.get("infiniband.bth.padcnt")), f.padCount(), where);
            assertEquals(Tshark.number(t.get("infiniband.bth.tver")), f.tver(), where);
            assertEquals(Tshark.number(t.get("infiniband.bth.p_key")), f.pkey(), where);
            assertEquals(Tshark.number(t.get("infiniband.bth.destqp")), f.destQp(), where);
            assertEquals(Tshark.bool(t.get("infiniband.bth.a")), f.ackReq(), where);
            assertEquals(Tshark.number(t.get("infiniband.bth.psn")), f.psn(), where);
            if (f.hasReth())
            {
                assertEquals(Tshark.number(t.get("infiniband.reth.va")), f.rethVirtualAddress(), where);
                assertEquals(Tshark.number(t.get("infiniband.reth.r_key")), Integer.toUnsignedLong(f.rethRkey()), where);
                assertEquals(Tshark.number(t.get("infiniband.reth.dmalen")), Integer.toUnsignedLong(f.rethDmaLength()),
                    where);
            }
            if (f.hasAeth())
            {
                assertEquals(Tshark.number(t.get("infiniband.aeth.syndrome")), f.aethSyndrome(), where);
                assertEquals(Tshark.number(t.get("infiniband.aeth.msn")), f.aethMsn(), where);
            }
            if (f.hasImmediate())
            {
                assertEquals(t.get("infiniband.immdt").split(";")[0], String.format("%08x", f.immediateData()), where);
            }
            if (f.opcode() != Opcode.CNP)
            {
                assertEquals(t.get("infiniband.invariant.crc"), String.format("0x%08x", Icrc.wireOrder(f.icrcReceived())),
                    where);
            }
            compared++;
        }
        assertEquals(17, compared);
    }
}
