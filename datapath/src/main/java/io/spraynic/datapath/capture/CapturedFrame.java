package io.spraynic.datapath.capture;

import java.util.Arrays;
import java.util.HexFormat;

/**
 * A copy of one frame of a capture file, for tests and tools; the datapath uses {@link PcapReader}'s
 * zero-copy cursor instead.
 *
 * @param index          0-based index of the frame in its file.
 * @param data           the captured bytes.
 * @param originalLength length of the frame on the wire.
 * @param timestampNanos timestamp in nanoseconds since the Unix epoch.
 * @param interfaceId    pcapng interface id, 0 for classic pcap.
 * @param linkType       link type of the frame's interface, e.g. {@link LinkType#ETHERNET}.
 */
public record CapturedFrame(long index, byte[] data, int originalLength, long timestampNanos, int interfaceId,
    int linkType)
{
    @Override
    public boolean equals(final Object o)
    {
        return o instanceof CapturedFrame other && index == other.index && Arrays.equals(data, other.data) &&
            originalLength == other.originalLength && timestampNanos == other.timestampNanos &&
            interfaceId == other.interfaceId && linkType == other.linkType;
    }

    @Override
    public int hashCode()
    {
        return Long.hashCode(index) * 31 + Arrays.hashCode(data);
    }

    @Override
    public String toString()
    {
        return "CapturedFrame{index=" + index + ", length=" + data.length + "/" + originalLength + ", ts=" +
            timestampNanos + ", if=" + interfaceId + ", linkType=" + LinkType.name(linkType) + ", data=" +
            HexFormat.of().formatHex(data) + "}";
    }
}
