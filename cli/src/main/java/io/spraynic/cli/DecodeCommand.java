package io.spraynic.cli;

import io.spraynic.datapath.capture.DecodeSummary;
import io.spraynic.datapath.capture.FrameDecoder;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.BufferedOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;

/**
 * {@code spraynic decode FILE}: every frame of a pcap or pcapng file through SprayNIC's own parser,
 * one line (or one JSON object) per frame, to compare with Wireshark.
 */
@Command(name = "decode", mixinStandardHelpOptions = true,
    description = {
        "Decode every frame of a pcap or pcapng file with SprayNIC's RoCEv2 parser, one line per frame.",
        "With --json, one JSON object per line (frame, valid, error, ipVersion, srcIp, dstIp, ecn, udpSrcPort, " +
        "udpDstPort, opcode, solicited, migReq, padCount, tver, pkey, destQp, ackReq, psn, rethVa, rethRkey, " +
        "rethLength, aethSyndrome, aethMsn, immediate, payloadLength, icrc, icrcValid, spray); spray is null or " +
        "every field of the spray headers, named as in docs/PROTOCOL.md's tables (seth, reth, immdt, sackh, " +
        "prbh, nakh, conh, hsb, addresses). A malformed frame shows every field that could be read."})
final class DecodeCommand implements Callable<Integer>
{
    @Parameters(paramLabel = "FILE", description = "A pcap or pcapng capture.")
    Path file;

    @Option(names = "--json", description = "One JSON object per frame.")
    boolean json;

    @Option(names = "--summary", description = "After the frames, print the parser's counters (to stderr).")
    boolean summary;

    public Integer call() throws Exception
    {
        if (!Files.isReadable(file))
        {
            throw new IllegalArgumentException("cannot read " + file + ": no such file or no permission");
        }
        final PrintStream out = new PrintStream(new BufferedOutputStream(System.out, 1 << 16), false, StandardCharsets.UTF_8);
        final DecodeSummary result;
        try
        {
            result = FrameDecoder.decode(file, json, out);
        }
        finally
        {
            out.flush(); // the frames before a corrupt block reach stdout before the error does stderr
        }
        if (summary)
        {
            System.err.printf("%d frames: %d RoCEv2, %d not RoCEv2, %d malformed, %d of unsupported link type%n",
                result.frames(), result.roce(), result.notOurs(), result.malformed(), result.unsupportedLinkType());
        }
        return 0;
    }
}
