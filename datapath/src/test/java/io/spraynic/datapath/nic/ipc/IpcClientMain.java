package io.spraynic.datapath.nic.ipc;

import io.spraynic.datapath.api.ReceiveRequest;
import io.spraynic.datapath.api.SendRequest;
import io.spraynic.datapath.api.DrainReport;
import io.spraynic.datapath.api.RocevEndpoint;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;

/**
 * An application in its own process for {@link NicClientProcessTest}: it reaches the test's NIC only through the
 * IPC directory, and talks to the test over stdin/stdout lines.
 * <p>
 * {@code IpcClientMain DIR spray|rocev2 PEER_IP PEER_MAC PEER_ADDRESS PEER_RKEY [hold]}: registers 2 MiB,
 * connects to the peer, and with {@code hold} prints READY and waits to be killed; else after GO it writes
 * 1 MiB (pattern 31) to the peer's address, SENDs 4 KiB (pattern 32), posts a receive of 8 KiB at 1 MiB and
 * reports what arrived there.
 */
public final class IpcClientMain
{
    static final long REGION_BYTES = 2 << 20;
    static final int WRITE_BYTES = 1 << 20;
    static final long SEND_OFFSET = 3 << 19;
    static final int SEND_BYTES = 4096;
    static final long RECEIVE_OFFSET = 1 << 20;
    static final int RECEIVE_BYTES = 8192;

    private IpcClientMain()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final Path dir = Path.of(args[0]);
        final boolean spray = args[1].equals("spray");
        final int peerIp = Integer.parseInt(args[2]);
        final long peerAddress = Long.parseLong(args[3]);
        final int peerRkey = Integer.parseInt(args[4]);
        final boolean hold = args.length > 5 && args[5].equals("hold");
        final Duration wait = Duration.ofSeconds(20);
        final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        final NicClient client = NicClient.connect(dir, wait);
        final ClientRegion region = client.register(REGION_BYTES,
            AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ);
        IpcTestBed.fill(region.segment(), 0, WRITE_BYTES, 31);
        IpcTestBed.fill(region.segment(), SEND_OFFSET, SEND_BYTES, 32);
        final ClientConnection c;
        if (spray)
        {
            c = client.connect(new int[]{peerIp}, wait);
        }
        else
        {
            c = client.createQueuePair(0);
            say("ENDPOINT " + c.rocevEndpoint().format());
            final String peer = in.readLine();
            c.connect(RocevEndpoint.parse(peer.substring("PEER ".length())), wait);
        }
        say("CONNECTED " + c.localId());
        if (hold)
        {
            say("READY");
            Thread.sleep(Long.MAX_VALUE); // until killed
        }
        expect(in, "GO");
        final SendRequest send = new SendRequest();
        final WorkCompletion completion = new WorkCompletion();
        final int chunk = 64 * 1024;
        for (int i = 0; i < WRITE_BYTES / chunk; i++)
        {
            send.reset().wrId(i).opcode(WorkRequestOpcode.RDMA_WRITE).local(region, region.address() + (long)i * chunk, chunk)
                .remote(peerAddress + (long)i * chunk, peerRkey);
            post(c.postSend(c.streams() == 1 ? 0 : 1 + i % (c.streams() - 1), send));
        }
        for (int i = 0; i < WRITE_BYTES / chunk; i++)
        {
            await(c.sendCompletionQueue(), completion, "write");
        }
        post(c.postSend(0, send.reset().wrId(100).opcode(WorkRequestOpcode.SEND)
            .local(region, region.address() + SEND_OFFSET, SEND_BYTES)));
        await(c.sendCompletionQueue(), completion, "send");
        post(c.postReceive(0, new ReceiveRequest().wrId(200)
            .buffer(region, region.address() + RECEIVE_OFFSET, RECEIVE_BYTES)));
        say("RECEIVE-POSTED");
        await(c.receiveCompletionQueue(), completion, "receive");
        say("RECEIVED " + completion.wrId() + " " + completion.byteLength() + " " +
            IpcTestBed.mismatch(region.segment(), RECEIVE_OFFSET, completion.byteLength(), 33));
        final DrainReport.ConnectionDrain drain = c.close(wait);
        say("CLOSED idle=" + drain.idle() + " sends=" + drain.postedSends() + " receives=" + drain.postedReceives());
        client.close();
        say("DONE");
    }

    private static void post(final int result)
    {
        if (result != PostResult.OK)
        {
            throw new IllegalStateException("post refused: " + PostResult.name(result));
        }
    }

    private static void await(final ClientCompletionQueue cq, final WorkCompletion into, final String what)
    {
        final long deadline = System.nanoTime() + 20_000_000_000L;
        while (!cq.poll(into))
        {
            if (System.nanoTime() > deadline)
            {
                throw new IllegalStateException(what + " did not complete");
            }
            Thread.onSpinWait();
        }
        if (into.status() != WorkCompletionStatus.SUCCESS)
        {
            throw new IllegalStateException(what + " completed as " + into);
        }
    }

    private static void expect(final BufferedReader in, final String line) throws java.io.IOException
    {
        final String got = in.readLine();
        if (!line.equals(got))
        {
            throw new IllegalStateException("expected " + line + " from the test, got " + got);
        }
    }

    private static void say(final String line)
    {
        System.out.println(line);
        System.out.flush();
    }
}
