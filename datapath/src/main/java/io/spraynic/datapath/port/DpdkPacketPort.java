package io.spraynic.datapath.port;

import io.spraynic.dpdk.Eal;
import io.spraynic.dpdk.EthPort;
import io.spraynic.dpdk.Mempool;
import io.spraynic.dpdk.PacketMemory;

/**
 * A {@link PacketPort} on one RX and one TX queue of a started DPDK {@link EthPort}. TX buffers
 * come from {@code pool}; RX buffers come from the pool the RX queue was set up with.
 */
public final class DpdkPacketPort implements PacketPort
{
    private final EthPort port;
    private final int portId;
    private final int queueId;
    private final Mempool pool;
    private final PacketMemory memory;
    private final String name;

    /**
     * @param port    a configured and started port.
     * @param queueId the RX and TX queue this instance drives.
     * @param pool    where transmit buffers come from.
     */
    public DpdkPacketPort(final EthPort port, final int queueId, final Mempool pool)
    {
        this.port = port;
        this.portId = port.portId();
        this.queueId = queueId;
        this.pool = pool;
        this.memory = PacketMemory.current();
        this.name = port.name() + "/q" + queueId;
    }

    public String name()
    {
        return name;
    }

    /**
     * @return the DPDK port, for control-path calls (stats, link, MTU).
     */
    public EthPort ethPort()
    {
        return port;
    }

    /**
     * @return the pool transmit buffers come from (the RX queues' too, as {@code DpdkNic} sets them up).
     */
    public Mempool pool()
    {
        return pool;
    }

    public int queueId()
    {
        return queueId;
    }

    public DpdkPacketBurst newBurst(final int capacity)
    {
        return new DpdkPacketBurst(capacity, memory);
    }

    public int receive(final PacketBurst burst)
    {
        return ((DpdkPacketBurst)burst).mbufs().receive(portId, queueId);
    }

    public boolean allocate(final PacketBurst burst, final int count)
    {
        return ((DpdkPacketBurst)burst).mbufs().allocate(pool, count);
    }

    public boolean allocateOne(final PacketBurst burst)
    {
        return ((DpdkPacketBurst)burst).mbufs().allocateOne(pool);
    }

    public int transmit(final PacketBurst burst)
    {
        return ((DpdkPacketBurst)burst).mbufs().transmit(portId, queueId);
    }

    public int transmitAndReceive(final PacketBurst burst)
    {
        return ((DpdkPacketBurst)burst).mbufs().transmitAndReceive(portId, queueId);
    }

    public void release(final PacketBurst burst)
    {
        ((DpdkPacketBurst)burst).mbufs().release();
    }

    public void releaseLast(final PacketBurst burst)
    {
        ((DpdkPacketBurst)burst).mbufs().releaseLast();
    }

    public void onPollerStart()
    {
        Eal.current().registerCurrentThread();
    }

    public void onPollerClose()
    {
        Eal.current().unregisterCurrentThread();
    }

    /**
     * The port itself belongs to whoever set it up: closing a queue's view leaves it open.
     */
    public void close()
    {
    }

    public String toString()
    {
        return "DpdkPacketPort{" + name + '}';
    }
}
