package io.spraynic.datapath.capture;

import java.io.IOException;

/**
 * A capture file that is not a well-formed pcap or pcapng file: bad magic, a block or record
 * that runs past the end of the file, a reference to an interface that was never described.
 */
public final class PcapFormatException extends IOException
{
    private static final long serialVersionUID = 1L;

    /**
     * @param message what is wrong and where (byte offset into the file).
     */
    public PcapFormatException(final String message)
    {
        super(message);
    }
}
