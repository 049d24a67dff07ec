package io.spraynic.bench.e2e;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.DatagramChannel;

/**
 * The kernel baseline: what a user without DPDK would do, Java {@link DatagramChannel}s over loopback, one
 * sending and one receiving thread (blocking, connected), carrying the same transfer as the RDMA
 * throughput benchmark: messages of one size cut into datagrams of at most {@link TransportPair#MTU} bytes
 * of payload, the spray and RoCEv2 packet payload. UDP does much less per packet (no acknowledgement, no
 * ordering, no placement into registered memory, no ICRC), so this is a generous baseline. Counted at the
 * receiver: datagrams the kernel dropped (full socket buffer) are not counted.
 */
public final class UdpBaseline
{
    private UdpBaseline()
    {
    }

    public static ThroughputResult run(final int messageBytes, final double warmupSeconds, final double seconds)
    {
        final int full = Math.min(messageBytes, TransportPair.MTU);
        final int last = messageBytes % TransportPair.MTU == 0 || messageBytes < TransportPair.MTU ? full :
            messageBytes % TransportPair.MTU;
        final int datagramsPerMessage = Math.max(1, (messageBytes + TransportPair.MTU - 1) / TransportPair.MTU);
        try (DatagramChannel receiver = DatagramChannel.open(); DatagramChannel sender = DatagramChannel.open())
        {
            receiver.setOption(StandardSocketOptions.SO_RCVBUF, 4 << 20);
            receiver.bind(new InetSocketAddress("127.0.0.1", 0));
            sender.bind(new InetSocketAddress("127.0.0.1", 0));
            sender.connect(receiver.getLocalAddress());
            receiver.connect(sender.getLocalAddress());
            final Receive receive = new Receive(receiver, full, last);
            final Send send = new Send(sender, full, last, datagramsPerMessage);
            final Thread receiveThread = new Thread(receive, "udp-receive");
            final Thread sendThread = new Thread(send, "udp-send");
            receiveThread.start();
            sendThread.start();
            final ThreadMXBean threads = ManagementFactory.getThreadMXBean();

            PingPong.sleep((long)(warmupSeconds * 1000));
            final long startNanos = System.nanoTime();
            final long startBytes = receive.bytes;
            final long startPackets = receive.datagrams;
            final long startCpu = threads.getThreadCpuTime(sendThread.threadId()) + threads.getThreadCpuTime(receiveThread.threadId());
            PingPong.sleep((long)(seconds * 1000));
            final long endPackets = receive.datagrams;
            final long endBytes = receive.bytes;
            final long endNanos = System.nanoTime();
            final long endCpu = threads.getThreadCpuTime(sendThread.threadId()) + threads.getThreadCpuTime(receiveThread.threadId());

            send.running = false;
            join(sendThread);
            receiver.close(); // wakes the blocked receive
            join(receiveThread);
            final long packets = endPackets - startPackets;
            return new ThroughputResult("udp", TransportPair.MTU, messageBytes, packets / datagramsPerMessage, packets, endBytes - startBytes,
                endNanos - startNanos, endCpu - startCpu, receive.bad == 0 && packets > 0, 0);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    private static void join(final Thread thread)
    {
        try
        {
            thread.join(10_000);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }

    static final class Send implements Runnable
    {
        final DatagramChannel channel;
        final int full;
        final int last;
        final int perMessage;
        volatile boolean running = true;

        Send(final DatagramChannel channel, final int full, final int last, final int perMessage)
        {
            this.channel = channel;
            this.full = full;
            this.last = last;
            this.perMessage = perMessage;
        }

        public void run()
        {
            final ByteBuffer buffer = ByteBuffer.allocateDirect(TransportPair.MTU).order(ByteOrder.LITTLE_ENDIAN);
            long seq = 0;
            try
            {
                while (running)
                {
                    for (int i = 0; i < perMessage; i++)
                    {
                        buffer.clear().limit(i == perMessage - 1 ? last : full);
                        if (buffer.limit() >= 8)
                        {
                            buffer.putLong(0, seq);
                        }
                        channel.write(buffer);
                        seq++;
                    }
                }
            }
            catch (final IOException ex)
            {
                if (running)
                {
                    throw new UncheckedIOException(ex);
                }
            }
        }
    }

    static final class Receive implements Runnable
    {
        final DatagramChannel channel;
        final int full;
        final int last;
        volatile long datagrams;
        volatile long bytes;
        volatile long bad;
        volatile long reordered;

        Receive(final DatagramChannel channel, final int full, final int last)
        {
            this.channel = channel;
            this.full = full;
            this.last = last;
        }

        public void run()
        {
            final ByteBuffer buffer = ByteBuffer.allocateDirect(TransportPair.MTU + 64).order(ByteOrder.LITTLE_ENDIAN);
            long previous = -1;
            try
            {
                while (true)
                {
                    buffer.clear();
                    final int n = channel.read(buffer);
                    final long seq = n >= 8 ? buffer.getLong(0) : previous + 1;
                    if (n != full && n != last)
                    {
                        bad++; // wrong length
                    }
                    // loopback reorders when the sending thread moves between CPUs (each has its own backlog): not
                    // corruption, so counted apart from bad datagrams
                    if (seq <= previous)
                    {
                        reordered++;
                    }
                    previous = Math.max(previous, seq);
                    datagrams++;
                    bytes += n;
                }
            }
            catch (final ClosedChannelException ex)
            {
                // closed at the end of the run
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException(ex);
            }
        }
    }
}
