package io.spraynic.pmd;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Driver arguments as EAL's kvargs parser reads them: {@code key=value} pairs separated by commas,
 * where a comma inside {@code [brackets]} belongs to the value (as in {@code representor=[0-3]}).
 */
final class Devargs
{
    /** Keys as drivers spell them: {@code iface}, {@code tx_pcap}, {@code zero-copy}. */
    private static final Pattern KEY = Pattern.compile("[A-Za-z0-9_.-]+");

    /**
     * One {@code key=value} pair.
     *
     * @param key   the argument name.
     * @param value its value, never empty.
     */
    record Entry(String key, String value)
    {
    }

    private Devargs()
    {
    }

    /**
     * @param args    driver arguments, possibly empty.
     * @param keyPath where the arguments were configured, for errors.
     * @return the pairs in order; a key may repeat (e.g. one {@code rx_pcap} per queue).
     */
    static List<Entry> parse(final String args, final String keyPath)
    {
        final List<Entry> entries = new ArrayList<>();
        if (args.isEmpty())
        {
            return entries;
        }

        for (final String pair : split(args, keyPath))
        {
            final int equals = pair.indexOf('=');
            if (equals <= 0 || equals == pair.length() - 1 || !KEY.matcher(pair.substring(0, equals)).matches())
            {
                throw new ConfigException(keyPath, Toml.quote(args),
                    "must be key=value pairs separated by commas, e.g. \"iface=veth0,qpairs=1\"; " +
                    Toml.quote(pair) + " is not one");
            }
            entries.add(new Entry(pair.substring(0, equals), pair.substring(equals + 1)));
        }

        return entries;
    }

    /**
     * @param entries pairs in order.
     * @return the pairs joined as EAL takes them.
     */
    static String format(final List<Entry> entries)
    {
        final StringBuilder sb = new StringBuilder();
        for (final Entry entry : entries)
        {
            sb.append(sb.isEmpty() ? "" : ",").append(entry.key()).append('=').append(entry.value());
        }

        return sb.toString();
    }

    /**
     * Checks one key of an {@code args} table.
     *
     * @param keyPath e.g. {@code port[0].args}.
     * @param key     the key in that table.
     */
    static void checkKey(final String keyPath, final String key)
    {
        if (!KEY.matcher(key).matches())
        {
            throw new ConfigException(keyPath + '.' + Toml.key(key), Toml.quote(key),
                "is not a driver argument name: use letters, digits, '_', '-' or '.'");
        }
    }

    /**
     * Checks one value of an {@code args} table, which EAL will read back out of a comma-separated string.
     *
     * @param keyPath e.g. {@code port[0].args.iface}.
     * @param value   the value as a string.
     */
    static void checkValue(final String keyPath, final String value)
    {
        if (value.isEmpty())
        {
            throw new ConfigException(keyPath, Toml.quote(value), "must not be empty");
        }
        int depth = 0;
        for (int i = 0; i < value.length(); i++)
        {
            final char c = value.charAt(i);
            depth += c == '[' ? 1 : c == ']' ? -1 : 0;
            if (c == ',' && depth == 0)
            {
                throw new ConfigException(keyPath, Toml.quote(value),
                    "must not contain a comma outside [brackets]: EAL splits driver arguments on commas");
            }
        }
    }

    /**
     * @param entries pairs.
     * @param key     an argument name.
     * @return the first value of that argument, or null when absent.
     */
    static String first(final List<Entry> entries, final String key)
    {
        for (final Entry entry : entries)
        {
            if (entry.key().equals(key))
            {
                return entry.value();
            }
        }

        return null;
    }

    private static List<String> split(final String args, final String keyPath)
    {
        final List<String> pairs = new ArrayList<>();
        int depth = 0;
        int start = 0;
        for (int i = 0; i < args.length(); i++)
        {
            final char c = args.charAt(i);
            if (c == '[')
            {
                depth++;
            }
            else if (c == ']')
            {
                depth--;
            }
            else if (c == ',' && depth == 0)
            {
                pairs.add(args.substring(start, i));
                start = i + 1;
            }
            if (depth < 0)
            {
                break;
            }
        }
        if (depth != 0)
        {
            throw new ConfigException(keyPath, Toml.quote(args), "must have balanced [brackets]");
        }
        pairs.add(args.substring(start));

        return pairs;
    }
}
