package io.spraynic.datapath.capture;

import io.spraynic.datapath.wire.RoceFrame;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The spray vectors that tools/decoders/make_spray_vectors.py builds with its scapy layers (written from
 * docs/PROTOCOL.md alone): {@code spraynic decode --json} reports each one's reason and every spray header field the
 * generator put there, exactly, malformed ones included (S2.5, S3.1).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SprayVectorsTest
{
    @Test
    void shouldReportTheReasonAndEveryFieldOfEveryVector() throws Exception
    {
        final List<String> expected = Files.readAllLines(FrameDecoderTest.resource("spray_vectors.jsonl"),
            StandardCharsets.UTF_8);
        final List<CapturedFrame> frames = PcapReader.readAll(FrameDecoderTest.resource("spray_vectors.pcap"));
        assertEquals(expected.size(), frames.size());
        final FrameDecoder decoder = new FrameDecoder();
        int malformed = 0;
        for (int i = 0; i < frames.size(); i++)
        {
            final byte[] bytes = frames.get(i).data();
            final RoceFrame frame = decoder.parse(MemorySegment.ofArray(bytes), 0, bytes.length, LinkType.ETHERNET);
            final StringBuilder json = new StringBuilder();
            FrameDecoder.appendJson(json, i, frame);
            final String line = expected.get(i);
            assertEquals(after(line, "\"error\":", ",\"spray\":"), after(json.toString(), "\"error\":", ",\"ipVersion\":"),
                "reason of vector " + i + ": " + json);
            assertEquals(after(line, "\"spray\":", null), after(json.toString(), "\"spray\":", null),
                "spray headers of vector " + i);
            malformed += line.contains("\"error\":null") ? 0 : 1;
        }
        assertEquals(51, frames.size(), "every vector");
        assertEquals(17, malformed, "the malformed ones");
    }

    // the text between `from` and `to` (or the object's closing brace)
    private static String after(final String line, final String from, final String to)
    {
        final int start = line.indexOf(from) + from.length();
        return null == to ? line.substring(start, line.length() - 1) : line.substring(start, line.indexOf(to, start));
    }
}
