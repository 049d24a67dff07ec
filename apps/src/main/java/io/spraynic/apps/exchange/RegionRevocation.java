package io.spraynic.apps.exchange;

import io.spraynic.datapath.nic.EmbeddedNic;
import io.spraynic.datapath.verbs.MemoryRegion;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;

/**
 * Deregistering, from another process, the region a serving NIC ({@code spraynic nic --expose --exchange DIR})
 * published in its exchange directory: {@code spraynic deregister} writes {@value #REQUEST} naming the region's rkey,
 * and the NIC, which looks for it between its accepts, deregisters the region on every worker (a peer's WRITE into
 * it is then refused, a READ response under way from it is refused as S9.3.2 says, nothing is read from it or placed
 * into it again) and answers in {@value #ANSWER}. What a compliance suite needs to take a responder's region away
 * in the middle of a READ, and an operator to withdraw what a NIC exposes without stopping it.
 * <p>
 * The request is input from whoever can write the directory: a file that is not a regular one, longer than
 * {@value #MAX_REQUEST_BYTES} bytes, not {@code rkey=N}, or naming another key is refused with the reason, and the
 * region stays registered.
 * <p>
 * Once the region is deregistered, {@code nic.addr} names the key it had as {@code deregistered=RKEY} instead of
 * {@code addr}, {@code rkey} and {@code length}: a visitor that reads it later is told so rather than refused on the
 * wire.
 */
public final class RegionRevocation
{
    /** The request's file name in the exchange directory. */
    public static final String REQUEST = "deregister";
    /** The NIC's answer's file name: {@code deregistered rkey=N}, or {@code refused: reason}. */
    public static final String ANSWER = "deregistered";
    /** The most bytes of a request read: {@code rkey=} and a 32-bit key, with room for a newline. */
    public static final int MAX_REQUEST_BYTES = 64;

    private static final String DONE = "deregistered rkey=";
    private static final String REFUSED = "refused: ";

    private RegionRevocation()
    {
    }

    /**
     * Serving NIC, control thread: takes a request in {@code directory}, if there is one, and answers it (a region
     * already deregistered refuses it: there is none to name).
     *
     * @return the answer published ({@link #deregistered} says which it was), or null: no request.
     */
    public static String serve(final EmbeddedNic nic, final MemoryRegion region, final Path directory)
        throws IOException
    {
        final Path request = directory.resolve(REQUEST);
        if (!Files.exists(request, LinkOption.NOFOLLOW_LINKS))
        {
            return null;
        }
        final String refusal = refusal(request, region);
        Files.deleteIfExists(request);
        final String answer;
        if (null != refusal)
        {
            answer = REFUSED + refusal;
        }
        else
        {
            nic.deregister(region); // returns once no worker reads or places into it any more
            answer = DONE + Integer.toUnsignedString(region.rkey());
            try
            {
                PeerExchange.publishDeregistered(nic, region, directory); // before the answer: the requester may look
            }
            catch (final IOException ex)
            {
                PeerExchange.publish(directory, ANSWER, answer); // it is deregistered: say so whatever nic.addr says
                return answer + "; nic.addr still names it: " + ex;
            }
        }
        PeerExchange.publish(directory, ANSWER, answer);
        return answer;
    }

    /** @return whether {@code answer}, as {@link #serve} published it, says the region was deregistered. */
    public static boolean deregistered(final String answer)
    {
        return answer.startsWith(DONE);
    }

    // why the request at `request` is not one to deregister `region` by, or null when it is
    private static String refusal(final Path request, final MemoryRegion region) throws IOException
    {
        if (!Files.isRegularFile(request, LinkOption.NOFOLLOW_LINKS))
        {
            return REQUEST + " is not a regular file";
        }
        final String raw;
        try
        {
            // a regular file of this user, root or the directory's owner, from a directory others cannot write into:
            // a stranger's request in a sticky directory (the rkey is in the readable nic.addr) is not the operator's,
            // and a pipe swapped in for it after the check above held the NIC's loop for good
            raw = PeerExchange.read(request);
        }
        catch (final NoSuchFileException ex)
        {
            return REQUEST + " went away before it was read";
        }
        catch (final IOException ex)
        {
            return ex.getMessage();
        }
        if (raw.length() > MAX_REQUEST_BYTES)
        {
            return REQUEST + " holds more than " + MAX_REQUEST_BYTES + " bytes";
        }
        final String text = raw.strip();
        if (!text.startsWith("rkey="))
        {
            return REQUEST + " says '" + printable(text) + "', not rkey=N";
        }
        final int rkey;
        try
        {
            rkey = Integer.parseUnsignedInt(text.substring("rkey=".length()));
        }
        catch (final NumberFormatException ex)
        {
            return REQUEST + " names no 32-bit key: '" + printable(text) + "'";
        }
        if (!region.isRegistered())
        {
            return "the region is deregistered already";
        }
        if (rkey != region.rkey())
        {
            return "rkey " + Integer.toUnsignedString(rkey) + " is not the exposed region's";
        }
        return null;
    }

    private static String printable(final String text)
    {
        final StringBuilder shown = new StringBuilder(text.length());
        text.codePoints().forEach(c -> shown.appendCodePoint(c >= 0x20 && c < 0x7f ? c : '?'));
        return shown.toString();
    }

    /**
     * Requester: asks the NIC serving {@code directory} to deregister the region its {@code nic.addr} names, and waits
     * for the answer.
     *
     * @return null once the region is deregistered, else the NIC's reason for refusing.
     * @throws IllegalStateException when the directory has no {@code nic.addr} or no answer comes within {@code timeout}.
     */
    public static String request(final Path directory, final Duration timeout) throws IOException
    {
        if (!Files.isRegularFile(directory.resolve("nic.addr")))
        {
            throw new IllegalStateException("no nic.addr in " + directory + ": is spraynic nic --expose running " +
                "with --exchange " + directory + "?");
        }
        final String key = Integer.toUnsignedString(PeerExchange.servedKey(directory));
        Files.deleteIfExists(directory.resolve(ANSWER));
        PeerExchange.publish(directory, REQUEST, "rkey=" + key + "\n");
        final String answer;
        try
        {
            answer = PeerExchange.await(directory, ANSWER, timeout).strip();
        }
        catch (final IllegalStateException ex)
        {
            Files.deleteIfExists(directory.resolve(REQUEST));
            throw new IllegalStateException("no NIC answered the request to deregister rkey " + key + " in " +
                directory + " within " + timeout.toMillis() + " ms: is spraynic nic --expose running with " +
                "--exchange " + directory + "?", ex);
        }
        Files.deleteIfExists(directory.resolve(ANSWER));
        if (answer.equals(DONE + key))
        {
            return null;
        }
        return answer.startsWith(REFUSED) ? answer.substring(REFUSED.length()) : "the NIC answered '" + answer + "'";
    }
}
