package io.spraynic.datapath.port;

import io.spraynic.datapath.capture.CapturedFrame;
import io.spraynic.datapath.capture.LinkType;
import io.spraynic.datapath.capture.PcapReader;
import io.spraynic.datapath.capture.PcapWriter;
import io.spraynic.dpdk.Eal;
import io.spraynic.dpdk.EthPort;
import io.spraynic.dpdk.Mempool;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * DPDK's {@code net_pcap} PMD: what we transmit lands in a pcap file that our reader reads back
 * intact, and a pcap file we write is received intact.
 */
class DpdkNetPcapTest
{
    private static Eal eal;
    private static Mempool pool;

    @BeforeAll
    static void start()
    {
        eal = DpdkTestSupport.initEal("netpcap");
        eal.registerCurrentThread();
        pool = DpdkTestSupport.createPool("netpcap");
    }

    @AfterAll
    static void stop()
    {
        pool.close();
        eal.close();
    }

    @Test
    void shouldWriteTransmittedFramesToPcap(@TempDir final Path dir) throws Exception
    {
        final Path input = dir.resolve("empty.pcap");
        try (PcapWriter ignored = PcapWriter.pcap(input, LinkType.ETHERNET))
        {
            // net_pcap wants an RX source too: an empty capture.
        }
        final Path output = dir.resolve("tx.pcap");
        eal.createVdev("net_pcap0", "rx_pcap=" + input + ",tx_pcap=" + output);
        final EthPort ethPort = EthPort.byName("net_pcap0");
        final DpdkPacketPort port = DpdkTestSupport.startSingleQueue(ethPort, pool);

        final int[] lengths = {60, 64, 100, 512, 1514};
        final PacketBurst burst = port.newBurst(32);
        long sequence = 0;
        for (final int length : lengths)
        {
            DpdkTestSupport.fill(port, burst, 10, length, sequence);
            sequence += 10;
            assertEquals(10, port.transmit(burst));
        }
        burst.close();
        ethPort.close(); // flushes and closes the dumper
        eal.removeVdev("net_pcap0");

        final List<CapturedFrame> frames = PcapReader.readAll(output);
        assertEquals(50, frames.size());
        for (int i = 0; i < frames.size(); i++)
        {
            final byte[] data = frames.get(i).data();
            assertEquals(lengths[i / 10], data.length);
            assertEquals(i, RawFrames.verify(MemorySegment.ofArray(data), 0, data.length));
        }
    }

    @Test
    void shouldReceiveFramesReplayedFromPcap(@TempDir final Path dir) throws Exception
    {
        final Path input = dir.resolve("rx.pcap");
        final List<Long> written = new ArrayList<>();
        try (PcapWriter writer = PcapWriter.pcap(input, LinkType.ETHERNET); Arena arena = Arena.ofConfined())
        {
            final MemorySegment frame = arena.allocate(2048);
            for (int i = 0; i < 40; i++)
            {
                final int length = 60 + i * 37;
                RawFrames.write(frame, 0, length, 700 + i);
                writer.write(frame, 0, length, 1_000_000L * i);
                written.add(700L + i);
            }
        }
        eal.createVdev("net_pcap1", "rx_pcap=" + input + ",tx_pcap=" + dir.resolve("unused.pcap"));
        final EthPort ethPort = EthPort.byName("net_pcap1");
        final DpdkPacketPort port = DpdkTestSupport.startSingleQueue(ethPort, pool);
        try
        {
            assertEquals(written, DpdkTestSupport.toList(DpdkTestSupport.receive(port, 40, 10_000)));
        }
        finally
        {
            ethPort.close();
            eal.removeVdev("net_pcap1");
        }
    }
}
