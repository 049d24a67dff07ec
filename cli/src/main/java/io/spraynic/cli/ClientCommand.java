package io.spraynic.cli;

import io.spraynic.apps.exchange.PeerExchange;
import io.spraynic.datapath.api.BulkTransfer;
import io.spraynic.datapath.api.Connection;
import io.spraynic.datapath.api.DrainReport;
import io.spraynic.datapath.api.SeededPattern;
import io.spraynic.datapath.nic.NicConnection;
import io.spraynic.datapath.nic.ipc.ClientRegion;
import io.spraynic.datapath.nic.ipc.IpcFileDescriptor;
import io.spraynic.datapath.nic.ipc.NicClient;
import io.spraynic.datapath.verbs.AccessFlags;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Callable;

/**
 * {@code spraynic client}: an application in its own process using a running {@code spraynic nic --ipc-dir}
 * through shared memory ({@link NicClient}), to try the NIC-process API from a shell: it connects, registers
 * memory, and with {@code --peer-exchange} RDMA-WRITEs a pattern into the memory a peer NIC exposes, READs it
 * back and checks every byte.
 */
@Command(name = "client", mixinStandardHelpOptions = true,
    description = "Use a running NIC (spraynic nic --ipc-dir) from this process through shared memory: register memory and, " +
        "with --peer-exchange, RDMA-WRITE then READ back a peer NIC's exposed memory, checking every byte.")
final class ClientCommand implements Callable<Integer>
{
    @Option(names = "--ipc-dir", paramLabel = "DIR",
        description = "The NIC's IPC directory (default: $SPRAYNIC_IPC_DIR, else /dev/shm/spraynic-$USER).")
    Path ipcDir;

    @Option(names = "--size", converter = SizeConverter.class, defaultValue = "1m",
        description = "Bytes to register (and to write and read back with --peer-exchange; default ${DEFAULT-VALUE}).")
    long size;

    @Option(names = "--message", converter = SizeConverter.class, defaultValue = "64k",
        description = "Bytes per RDMA WRITE or READ (default ${DEFAULT-VALUE}).")
    long message;

    @Option(names = "--peer-exchange", paramLabel = "DIR",
        description = "Exchange directory of a spray NIC that exposes memory (spraynic nic --mode spray --expose N --exchange DIR).")
    Path peerExchange;

    @Option(names = "--timeout", defaultValue = "20", description = "Seconds any step may take (default ${DEFAULT-VALUE}).")
    double timeoutSeconds;

    public Integer call() throws Exception
    {
        BadOption.size("--size", size, 1, Long.MAX_VALUE);
        BadOption.size("--message", message, 1, 1 << 30);
        BadOption.range("--timeout", timeoutSeconds, 0.001, 86_400, 20);
        final Path dir = null == ipcDir ? IpcFileDescriptor.defaultDirectory() : ipcDir;
        final Duration timeout = Duration.ofMillis((long)(timeoutSeconds * 1000));
        try (NicClient nic = NicClient.connect(dir, timeout))
        {
            if (null == nic.mode())
            {
                throw new IllegalArgumentException("the NIC in " + dir + " runs in classify mode: it serves spraynic capture " +
                    "only; run it with --mode spray or --mode rocev2 for clients");
            }
            final java.net.InetAddress local = nic.localAddress(0); // IPv4 or IPv6, as the NIC's plane 0 speaks
            System.out.printf(Locale.ROOT, "spraynic client: NIC pid %d in %s: %s, %d plane(s), %s; client id %d%n",
                nic.nicPid(), dir, nic.mode().name().toLowerCase(Locale.ROOT), nic.planes(),
                null == local ? "no address" : local.getHostAddress(),
                nic.clientId());
            final ClientRegion region = nic.register(size, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE |
                AccessFlags.REMOTE_READ);
            System.out.printf(Locale.ROOT, "spraynic client: registered %,d bytes at addr=%d lkey=%s rkey=%s (a sealed memfd)%n",
                region.length(), region.address(), Integer.toUnsignedString(region.lkey()),
                Integer.toUnsignedString(region.rkey()));
            if (null == peerExchange)
            {
                return 0;
            }
            if (nic.mode() != NicConnection.Kind.SPRAY)
            {
                throw new IllegalArgumentException("--peer-exchange visits a spray NIC; this NIC runs " + nic.mode());
            }
            final PeerExchange.Served peer = PeerExchange.awaitServed(peerExchange, nic.planes(), timeout);
            if (size > peer.length())
            {
                throw new IllegalArgumentException("the peer exposes " + peer.length() + " bytes, fewer than --size " + size);
            }
            final MemorySegment bytes = region.segment();
            final long half = size / 2;
            final MemorySegment source = bytes.asSlice(0, half);
            final MemorySegment readBack = bytes.asSlice(half, half);
            SeededPattern.fill(source, size);
            final Connection c = nic.connect(peer.ips(), timeout);
            System.out.printf(Locale.ROOT, "spraynic client: connected 0x%x, %d stream(s)%n", c.localId(), c.streams());
            final long start = System.nanoTime();
            BulkTransfer.write(c, region, 0, half, peer.address(), peer.rkey(), (int)message, false, timeout);
            BulkTransfer.read(c, region, half, half, peer.address(), peer.rkey(), (int)message, timeout);
            final long nanos = System.nanoTime() - start;
            final long mismatch = source.mismatch(readBack);
            final DrainReport.ConnectionDrain drain = c.close(timeout);
            System.out.printf(Locale.ROOT, "spraynic client: wrote and read back %,d bytes in %.1f ms: %s; %s%n", half,
                nanos / 1e6, mismatch == -1 ? "every byte verified" : "MISMATCH at byte " + mismatch,
                drain.idle() ? "closed idle" : "closed with data in flight");
            return mismatch == -1 ? 0 : 1;
        }
    }
}
