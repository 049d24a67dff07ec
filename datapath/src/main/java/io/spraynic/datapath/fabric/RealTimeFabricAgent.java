package io.spraynic.datapath.fabric;

import io.spraynic.datapath.fault.FaultLog;
import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.port.PacketPort;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Runs a {@link Fabric} in real time between real ports: each fabric host's port on each plane may be
 * bridged to a {@link PacketPort} (a DPDK {@code net_ring}, an {@code InMemoryLink} end...) behind which
 * a real host (a SprayNIC instance, a test) sends and receives. Frames received from such a port enter
 * the fabric as that host's sends; frames the fabric delivers to that host are transmitted on the port
 * when their delivery time has come. Fabric hosts without ports may run in-fabric {@link Endpoint}s,
 * as in virtual time.
 * <p>
 * It is the same model as in virtual time, with time read from a {@link FabricClock} (the agent reads it;
 * the model only takes it as a parameter): each {@link #doWork} advances the fabric to the clock's time,
 * which delivers the frames now due (buffered per port and transmitted in bursts), then takes what the
 * ports received. Fabric time starts at the fabric's current time when the agent starts. The fabric's
 * resolution is the duty cycle: a frame is late by at most the time between two {@code doWork} calls,
 * so run it with a busy-spin (or no-op) idle strategy; a backing-off one adds its sleeps to every hop.
 * <p>
 * Everything runs on the agent's thread. Other threads change the fabric (faults, loss rates) only
 * through {@link #submit}, Aeron's command-queue pattern, so the per-packet path shares no mutable
 * state. The agent does not close the fabric or the ports.
 * <p>
 * A command, a frame or a fabric step that throws is caught, counted ({@link #faults()}), logged at most once
 * per reason per interval ({@link FaultLog}), and the agent goes on; receive bursts are always released.
 */
public final class RealTimeFabricAgent implements Agent
{
    private static final int COMMAND_QUEUE_CAPACITY = 1024;

    private final String roleName;
    private final Fabric fabric;
    private final FabricClock clock;
    private final int burstCapacity;
    private final ManyToOneConcurrentArrayQueue<Runnable> commands =
        new ManyToOneConcurrentArrayQueue<>(COMMAND_QUEUE_CAPACITY);
    private final List<Bridge> bridges = new ArrayList<>();
    private final Bridge[] bridgeArray;
    private final PacketPort[] startedPorts;
    private long epochNs;
    private boolean started;

    private long framesFromPorts;
    private long framesRefusedByFabric;
    private long framesToPorts;
    private long framesDroppedAtPorts;
    private long faults;
    private final FaultLog faultLog;

    /**
     * @param roleName      the agent's name.
     * @param fabric        the fabric to run; its hosts with ports get bridge endpoints attached.
     * @param hostPorts     {@code hostPorts[h][p]}: the real port behind host {@code h}'s port on plane
     *                      {@code p}, or null where none (a row may be null or shorter than the planes).
     * @param burstCapacity frames per receive and transmit burst.
     * @param clock         the real clock, usually {@link FabricClock#SYSTEM}.
     */
    public RealTimeFabricAgent(
        final String roleName,
        final Fabric fabric,
        final PacketPort[][] hostPorts,
        final int burstCapacity,
        final FabricClock clock)
    {
        if (burstCapacity < 1)
        {
            throw new IllegalArgumentException("burst capacity " + burstCapacity + " must be at least 1");
        }
        if (hostPorts.length > fabric.hostCount())
        {
            throw new IllegalArgumentException(hostPorts.length + " hosts of ports for a fabric of " +
                fabric.hostCount() + " hosts");
        }
        this.roleName = roleName;
        this.faultLog = new FaultLog(roleName);
        this.fabric = fabric;
        this.clock = clock;
        this.burstCapacity = burstCapacity;
        final List<PacketPort> distinctKinds = new ArrayList<>();
        final Set<Class<?>> kinds = new HashSet<>();
        for (int h = 0; h < hostPorts.length; h++)
        {
            if (null == hostPorts[h])
            {
                continue;
            }
            if (hostPorts[h].length > fabric.planes())
            {
                throw new IllegalArgumentException("host " + h + " has " + hostPorts[h].length +
                    " ports for a fabric of " + fabric.planes() + " planes");
            }
            Bridge bridge = null;
            for (int p = 0; p < hostPorts[h].length; p++)
            {
                final PacketPort port = hostPorts[h][p];
                if (null == port)
                {
                    continue;
                }
                if (null == bridge)
                {
                    bridge = new Bridge(fabric.host(h));
                    bridges.add(bridge);
                }
                bridge.ports[p] = port;
                if (kinds.add(port.getClass()))
                {
                    distinctKinds.add(port);
                }
            }
        }
        this.bridgeArray = bridges.toArray(new Bridge[0]);
        this.startedPorts = distinctKinds.toArray(new PacketPort[0]);
    }

    public void onStart()
    {
        // poller registration is per thread (DPDK registers it as an lcore): once per kind of port
        for (final PacketPort port : startedPorts)
        {
            port.onPollerStart();
        }
        for (final Bridge bridge : bridgeArray)
        {
            bridge.open();
            bridge.host.attach(bridge);
        }
        epochNs = clock.nanoTime() - fabric.now();
        started = true;
    }

    public int doWork()
    {
        if (!started)
        {
            onStart();
        }
        int work = 0;
        Runnable command;
        while (null != (command = commands.poll()))
        {
            try
            {
                command.run();
            }
            catch (final RuntimeException | AssertionError ex)
            {
                onFault("command", ex);
            }
            work++;
        }
        final long nowNs = clock.nanoTime() - epochNs;
        try
        {
            work += (int)Math.min(Integer.MAX_VALUE / 2, fabric.runUntil(nowNs));
        }
        catch (final RuntimeException | AssertionError ex)
        {
            onFault("fabric step", ex); // the event that threw is lost, as a frame lost in a switch
        }
        for (final Bridge bridge : bridgeArray)
        {
            work += bridge.receive();
        }
        for (final Bridge bridge : bridgeArray)
        {
            try
            {
                bridge.flushAll();
            }
            catch (final RuntimeException | AssertionError ex)
            {
                onFault("transmit", ex);
            }
        }
        return work;
    }

    // out of line: the loops stay small for the JIT; the exceptional path may allocate
    private void onFault(final String where, final Throwable fault)
    {
        faults++;
        faultLog.record(where, fault);
    }

    public void onClose()
    {
        for (final Bridge bridge : bridgeArray)
        {
            bridge.close();
            if (bridge.host.endpoint() == bridge)
            {
                bridge.host.attach(null);
            }
        }
        for (final PacketPort port : startedPorts)
        {
            port.onPollerClose();
        }
        started = false;
    }

    public String roleName()
    {
        return roleName;
    }

    /**
     * Runs {@code command} on the agent's thread before its next step: how other threads fail links,
     * change loss rates or schedule faults ({@link Fabric#at}) while the fabric runs.
     *
     * @return false if the command queue is full.
     */
    public boolean submit(final Runnable command)
    {
        return commands.offer(command);
    }

    /** @return the fabric. */
    public Fabric fabric()
    {
        return fabric;
    }

    /** @return frames received from real ports. */
    public long framesFromPorts()
    {
        return framesFromPorts;
    }

    /** @return frames received from real ports that the fabric refused (no free slot, too long). */
    public long framesRefusedByFabric()
    {
        return framesRefusedByFabric;
    }

    /** @return frames transmitted on real ports. */
    public long framesToPorts()
    {
        return framesToPorts;
    }

    /** @return unexpected exceptions caught and survived (commands, frames, fabric steps); agent thread. */
    public long faults()
    {
        return faults;
    }

    /** @return the same faults by reason. */
    public FaultLog faultLog()
    {
        return faultLog;
    }

    /** @return frames delivered by the fabric that a real port could not take (no buffer, ring full). */
    public long framesDroppedAtPorts()
    {
        return framesDroppedAtPorts;
    }

    /**
     * The endpoint standing for a real host inside the fabric.
     */
    private final class Bridge implements Endpoint
    {
        private final Host host;
        private final PacketPort[] ports;
        private final PacketBurst[] receiveBursts;
        private final PacketBurst[] transmitBursts;
        private final int[] rooms;

        Bridge(final Host host)
        {
            this.rooms = new int[host.portCount()];
            this.host = host;
            this.ports = new PacketPort[host.portCount()];
            this.receiveBursts = new PacketBurst[host.portCount()];
            this.transmitBursts = new PacketBurst[host.portCount()];
        }

        void open()
        {
            for (int p = 0; p < ports.length; p++)
            {
                if (null != ports[p] && null == receiveBursts[p])
                {
                    receiveBursts[p] = ports[p].newBurst(burstCapacity);
                    transmitBursts[p] = ports[p].newBurst(burstCapacity);
                    // learn the port's buffer size once, so a frame too long for it is dropped up front
                    if (!ports[p].allocate(transmitBursts[p], 1))
                    {
                        throw new IllegalStateException(ports[p].name() + " has no free buffer at start");
                    }
                    rooms[p] = transmitBursts[p].room(0);
                    ports[p].release(transmitBursts[p]);
                }
            }
        }

        int receive()
        {
            int received = 0;
            for (int p = 0; p < ports.length; p++)
            {
                final PacketPort port = ports[p];
                if (null == port)
                {
                    continue;
                }
                final PacketBurst burst = receiveBursts[p];
                final int count = port.receive(burst);
                if (count == 0)
                {
                    continue;
                }
                final HostPort fabricPort = host.port(p);
                final MemorySegment memory = burst.memory();
                try
                {
                    for (int i = 0; i < count; i++)
                    {
                        try
                        {
                            if (!fabricPort.send(memory, burst.offset(i), burst.length(i)))
                            {
                                framesRefusedByFabric++;
                            }
                        }
                        catch (final RuntimeException | AssertionError ex)
                        {
                            framesRefusedByFabric++;
                            onFault("frame", ex);
                        }
                    }
                }
                finally
                {
                    port.release(burst);
                }
                framesFromPorts += count;
                received += count;
            }
            return received;
        }

        public void onFrame(
            final long nowNs, final int portIndex, final MemorySegment segment, final long offset, final int length)
        {
            final PacketPort port = ports[portIndex];
            if (null == port)
            {
                framesDroppedAtPorts++;
                return;
            }
            if (length > rooms[portIndex])
            {
                framesDroppedAtPorts++;
                return;
            }
            final PacketBurst burst = transmitBursts[portIndex];
            if (burst.size() == burst.capacity())
            {
                flush(portIndex);
            }
            if (!port.allocate(burst, 1))
            {
                flush(portIndex);
                if (!port.allocate(burst, 1))
                {
                    framesDroppedAtPorts++;
                    return;
                }
            }
            final int index = burst.size() - 1;
            MemorySegment.copy(segment, offset, burst.memory(), burst.offset(index), length);
            burst.length(index, length);
        }

        public void onTimer(final long nowNs)
        {
        }

        void flushAll()
        {
            for (int p = 0; p < ports.length; p++)
            {
                if (null != transmitBursts[p] && transmitBursts[p].size() > 0)
                {
                    flush(p);
                }
            }
        }

        private void flush(final int portIndex)
        {
            final PacketPort port = ports[portIndex];
            final PacketBurst burst = transmitBursts[portIndex];
            final int size = burst.size();
            final int sent = port.transmit(burst);
            framesToPorts += sent;
            if (sent < size)
            {
                // a real NIC's TX ring was full: the frames are lost, as on a real link
                framesDroppedAtPorts += size - sent;
                port.release(burst);
            }
        }

        void close()
        {
            for (int p = 0; p < ports.length; p++)
            {
                if (null != receiveBursts[p])
                {
                    ports[p].release(receiveBursts[p]);
                    receiveBursts[p].close();
                    receiveBursts[p] = null;
                }
                if (null != transmitBursts[p])
                {
                    ports[p].release(transmitBursts[p]);
                    transmitBursts[p].close();
                    transmitBursts[p] = null;
                }
            }
        }
    }
}
