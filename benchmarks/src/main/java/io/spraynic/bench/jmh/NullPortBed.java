package io.spraynic.bench.jmh;

import io.spraynic.datapath.port.DpdkPacketPort;
import io.spraynic.dpdk.Eal;
import io.spraynic.dpdk.EthPort;
import io.spraynic.dpdk.Mempool;
import io.spraynic.pmd.MempoolConfig;

import java.util.List;

/**
 * One DPDK {@code net_null} port whose TX frees what it takes, over the NIC's default packet pool (8191 mbufs, a
 * 256-mbuf cache), in an EAL of its own on this thread: the bed of the TX-path CPU-time harnesses
 * ({@link SinkClaimCpuTime}, {@link SinkLookupCpuTime}). {@link #close()} stops the port and frees the pool and the EAL.
 */
final class NullPortBed implements AutoCloseable
{
    private static final String VDEV = "net_null0";

    private final Eal eal;
    private final Mempool pool;
    private final EthPort ethPort;
    private final DpdkPacketPort port;

    NullPortBed(final String name)
    {
        eal = Eal.init(List.of(name, "--no-huge", "-m", "512", "--no-pci", "-l", "0",
            "--file-prefix", name + "-" + ProcessHandle.current().pid(), "--log-level", "lib.eal:warning"));
        Mempool createdPool = null;
        EthPort createdPort = null;
        try
        {
            eal.registerCurrentThread();
            createdPool = Mempool.createPacketPool(name.replace('-', '_'), MempoolConfig.DEFAULT_MBUFS,
                MempoolConfig.DEFAULT_CACHE, MempoolConfig.DEFAULT_DATA_ROOM, -1);
            eal.createVdev(VDEV, "size=64");
            createdPort = EthPort.byName(VDEV);
            createdPort.configure(1, 1);
            createdPort.setupRxQueue(0, 1024, createdPool);
            createdPort.setupTxQueue(0, 1024);
            createdPort.start();
            port = new DpdkPacketPort(createdPort, 0, createdPool);
        }
        catch (final RuntimeException ex)
        {
            release(createdPort, createdPool);
            throw ex;
        }
        pool = createdPool;
        ethPort = createdPort;
    }

    DpdkPacketPort port()
    {
        return port;
    }

    Mempool pool()
    {
        return pool;
    }

    int portId()
    {
        return ethPort.portId();
    }

    public void close()
    {
        release(ethPort, pool);
    }

    private void release(final EthPort createdPort, final Mempool createdPool)
    {
        try
        {
            if (null != createdPort)
            {
                createdPort.close();
                eal.removeVdev(VDEV);
            }
            if (null != createdPool)
            {
                createdPool.close();
            }
        }
        finally
        {
            eal.close();
        }
    }
}
