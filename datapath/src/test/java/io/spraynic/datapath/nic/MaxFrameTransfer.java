package io.spraynic.datapath.nic;

import io.spraynic.datapath.capture.CapturedFrame;
import io.spraynic.datapath.capture.CapturingPacketPort;
import io.spraynic.datapath.capture.PcapReader;
import io.spraynic.datapath.capture.PcapWriter;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.telemetry.CountersFile;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;

/**
 * Two embedded NICs, one worker and one plane each, on two DPDK ports of one {@link DpdkNic} that reach each
 * other (a ring pair, or af_packet ports on a bridged veth): a verified transfer each way with
 * {@link VerifiedExchange}, every frame either NIC transmits recorded on its way out by the NIC's own capture
 * ({@link CapturingPacketPort}, a pcapng per NIC whose interface 1 is transmit) and measured afterwards.
 */
final class MaxFrameTransfer
{
    /** What a run saw: whether both directions verified, and the longest frame each NIC sent. */
    record Outcome(boolean verified, int longestFrameA, int longestFrameB, int mtuA, int mtuB, String detail)
    {
    }

    private MaxFrameTransfer()
    {
    }

    /**
     * @param configA  NIC A's configuration (mode, MTU); planes, addresses and frame limits are set here.
     * @param configB  NIC B's.
     * @return the outcome; both NICs are closed.
     */
    static Outcome run(final DpdkNic dpdk, final String portA, final String portB, final EmbeddedNicConfig configA,
        final EmbeddedNicConfig configB, final Path dir, final long bytes) throws Exception
    {
        final String[] portNames = {portA, portB};
        final EmbeddedNicConfig[] configs = {configA, configB};
        final PcapWriter[] captures = new PcapWriter[2];
        final Path[] captureFiles = new Path[2];
        final EmbeddedNic[] nics = new EmbeddedNic[2];
        final CountersFile[] counters = new CountersFile[2];
        try
        {
            for (int h = 0; h < 2; h++)
            {
                captureFiles[h] = dir.resolve("nic" + h + "-" + System.nanoTime() + ".pcapng");
                captures[h] = PcapWriter.pcapng(captureFiles[h]);
                final PacketPort port = new CapturingPacketPort(dpdk.packetPort(portNames[h], 0), captures[h]);
                configs[h].workers(1).planes(1).local(0, 0x0A63_0001 + h, 0x02_00_00_00_63_01L + h)
                    .sprayConfig(EmbeddedNicConfig::sharedCoreSprayConfig)
                    .bursts(32, dpdk.maxFrameLength(portNames[h]));
                counters[h] = CountersFile.create(dir, "maxframe" + h + "-" + ProcessHandle.current().pid(), 4096);
                nics[h] = EmbeddedNic.start(configs[h], new PacketPort[][]{{port}}, counters[h]);
            }
            final VerifiedExchange.Pair both = VerifiedExchange.runBoth(nics[0], nics[1], bytes, 64 * 1024,
                Duration.ofSeconds(60));
            final VerifiedExchange.Result client = both.client();
            final VerifiedExchange.Result served = both.server();
            for (int h = 0; h < 2; h++)
            {
                nics[h].close();
                nics[h] = null;
                captures[h].close();
                captures[h] = null;
            }
            return new Outcome(client.verified() && served.verified() && served.bytesEachWay() == bytes,
                longestTransmitted(captureFiles[0]), longestTransmitted(captureFiles[1]), configs[0].mtu, configs[1].mtu,
                both.describe());
        }
        finally
        {
            for (int h = 0; h < 2; h++)
            {
                if (null != nics[h])
                {
                    nics[h].close(); // its worker stops writing into the capture
                }
                if (null != captures[h])
                {
                    captures[h].close();
                }
                if (null != counters[h])
                {
                    counters[h].close();
                }
            }
        }
    }

    private static int longestTransmitted(final Path capture) throws IOException
    {
        int longest = 0;
        for (final CapturedFrame frame : PcapReader.readAll(capture))
        {
            if (frame.interfaceId() == 1) // CapturingPacketPort adds receive, then transmit
            {
                longest = Math.max(longest, frame.originalLength());
            }
        }
        return longest;
    }
}
