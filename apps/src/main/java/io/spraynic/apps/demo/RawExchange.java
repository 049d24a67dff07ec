package io.spraynic.apps.demo;

import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.port.RawFrames;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersManager;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A raw, verified one-way transfer between two ports: a sender agent writes numbered
 * {@link RawFrames}, a receiver agent checks every byte and the order. Each runs on its own
 * {@link AgentRunner} thread; progress is read from their counters. This is the port layer's
 * end-to-end check and the main job until the transports sit on top of it.
 */
public final class RawExchange
{
    /**
     * What a run did.
     *
     * @param framesSent     frames the sender handed to its port.
     * @param framesReceived frames of ours the receiver saw.
     * @param framesVerified frames intact and in the expected order.
     * @param corrupt        frames whose bytes did not match their sequence number.
     * @param outOfOrder     intact frames with an unexpected sequence number (loss or reordering).
     * @param bytes          bytes of verified frames.
     * @param nanos          time from the first send to the last receive (or the timeout).
     */
    public record Result(
        long framesRequested,
        long framesSent,
        long framesReceived,
        long framesVerified,
        long corrupt,
        long outOfOrder,
        long bytes,
        long nanos)
    {
        /**
         * @return whether every requested frame arrived intact and in order.
         */
        public boolean verified()
        {
            return framesVerified == framesRequested && corrupt == 0 && outOfOrder == 0;
        }

        public double seconds()
        {
            return nanos / 1e9;
        }

        public double mpps()
        {
            return nanos == 0 ? 0 : framesVerified * 1e3 / nanos;
        }

        public double gbps()
        {
            return nanos == 0 ? 0 : bytes * 8.0 / nanos;
        }
    }

    /**
     * Progress as the main thread samples it.
     */
    public record Progress(long framesRequested, long framesSent, long framesVerified, long elapsedNanos)
    {
    }

    private RawExchange()
    {
    }

    /**
     * Sends {@code frames} frames of {@code frameLength} bytes from {@code sender} to
     * {@code receiver} and waits until all arrived or {@code timeout} passed.
     */
    public static Result run(
        final PacketPort sender,
        final PacketPort receiver,
        final long frames,
        final int frameLength,
        final int burstSize,
        final IdleStrategy idleStrategy,
        final CountersManager counters,
        final Duration timeout,
        final Consumer<Progress> progress)
    {
        final AtomicCounter sent = counters.newCounter("raw-exchange: frames sent by " + sender.name());
        final AtomicCounter verified = counters.newCounter("raw-exchange: frames verified by " + receiver.name());
        final AtomicCounter received = counters.newCounter("raw-exchange: frames received by " + receiver.name());
        final AtomicCounter corrupt = counters.newCounter("raw-exchange: corrupt frames at " + receiver.name());
        final AtomicCounter outOfOrder = counters.newCounter("raw-exchange: out-of-order frames at " + receiver.name());
        final AtomicCounter verifiedBytes = counters.newCounter("raw-exchange: bytes verified by " + receiver.name());
        try
        {
            final SenderAgent senderAgent = new SenderAgent(sender, frames, frameLength, burstSize, sent);
            final ReceiverAgent receiverAgent = new ReceiverAgent(
                receiver, burstSize, received, verified, corrupt, outOfOrder, verifiedBytes);
            final AgentRunner receiverRunner = new AgentRunner(idleStrategy, Throwable::printStackTrace, null, receiverAgent);
            final AgentRunner senderRunner = new AgentRunner(idleStrategy, Throwable::printStackTrace, null, senderAgent);

            AgentRunner.startOnThread(receiverRunner);
            final long start = System.nanoTime();
            AgentRunner.startOnThread(senderRunner);
            final long deadline = start + timeout.toNanos();
            long lastReport = start;
            long now = start;
            try
            {
                while (verified.get() + corrupt.get() + outOfOrder.get() < frames && (now = System.nanoTime()) < deadline)
                {
                    if (now - lastReport >= TimeUnit.MILLISECONDS.toNanos(200))
                    {
                        lastReport = now;
                        progress.accept(new Progress(frames, sent.get(), verified.get(), now - start));
                    }
                    Thread.onSpinWait();
                    TimeUnit.MICROSECONDS.sleep(200);
                }
                now = System.nanoTime();
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
            finally
            {
                senderRunner.close();
                receiverRunner.close();
            }
            progress.accept(new Progress(frames, sent.get(), verified.get(), now - start));
            return new Result(frames, sent.get(), received.get(), verified.get(), corrupt.get(), outOfOrder.get(),
                verifiedBytes.get(), now - start);
        }
        finally
        {
            sent.close();
            verified.close();
            received.close();
            corrupt.close();
            outOfOrder.close();
            verifiedBytes.close();
        }
    }

    static final class SenderAgent implements Agent
    {
        private final PacketPort port;
        private final long frames;
        private final int frameLength;
        private final int burstSize;
        private final AtomicCounter sent;
        private PacketBurst burst;
        private long nextSequence;

        SenderAgent(final PacketPort port, final long frames, final int frameLength, final int burstSize, final AtomicCounter sent)
        {
            this.port = port;
            this.frames = frames;
            this.frameLength = frameLength;
            this.burstSize = burstSize;
            this.sent = sent;
        }

        public void onStart()
        {
            port.onPollerStart();
            burst = port.newBurst(burstSize);
        }

        public int doWork()
        {
            final int want = (int)Math.min(burstSize - burst.size(), frames - nextSequence);
            if (want > 0 && port.allocate(burst, want))
            {
                for (int i = burst.size() - want; i < burst.size(); i++)
                {
                    RawFrames.write(burst.memory(), burst.offset(i), frameLength, nextSequence++);
                    burst.length(i, frameLength);
                }
            }
            if (burst.size() == 0)
            {
                return 0;
            }
            final int transmitted = port.transmit(burst);
            if (transmitted > 0)
            {
                sent.getAndAddRelease(transmitted);
            }
            return transmitted;
        }

        public void onClose()
        {
            port.release(burst);
            burst.close();
            port.onPollerClose();
        }

        public String roleName()
        {
            return "raw-sender";
        }
    }

    static final class ReceiverAgent implements Agent
    {
        private final PacketPort port;
        private final int burstSize;
        private final AtomicCounter received;
        private final AtomicCounter verified;
        private final AtomicCounter corrupt;
        private final AtomicCounter outOfOrder;
        private final AtomicCounter verifiedBytes;
        private PacketBurst burst;
        private long expectedSequence;

        ReceiverAgent(
            final PacketPort port,
            final int burstSize,
            final AtomicCounter received,
            final AtomicCounter verified,
            final AtomicCounter corrupt,
            final AtomicCounter outOfOrder,
            final AtomicCounter verifiedBytes)
        {
            this.port = port;
            this.burstSize = burstSize;
            this.received = received;
            this.verified = verified;
            this.corrupt = corrupt;
            this.outOfOrder = outOfOrder;
            this.verifiedBytes = verifiedBytes;
        }

        public void onStart()
        {
            port.onPollerStart();
            burst = port.newBurst(burstSize);
        }

        public int doWork()
        {
            final int count = port.receive(burst);
            if (count == 0)
            {
                return 0;
            }
            int good = 0;
            long bytes = 0;
            for (int i = 0; i < count; i++)
            {
                final int length = burst.length(i);
                final long sequence = RawFrames.verify(burst.memory(), burst.offset(i), length);
                if (sequence == RawFrames.INVALID)
                {
                    corrupt.incrementRelease();
                }
                else if (sequence != expectedSequence)
                {
                    outOfOrder.incrementRelease();
                    expectedSequence = sequence + 1;
                }
                else
                {
                    good++;
                    bytes += length;
                    expectedSequence++;
                }
            }
            port.release(burst);
            received.getAndAddRelease(count);
            verifiedBytes.getAndAddRelease(bytes);
            verified.getAndAddRelease(good);
            return count;
        }

        public void onClose()
        {
            port.release(burst);
            burst.close();
            port.onPollerClose();
        }

        public String roleName()
        {
            return "raw-receiver";
        }
    }
}
