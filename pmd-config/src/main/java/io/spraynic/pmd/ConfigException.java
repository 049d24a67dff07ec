package io.spraynic.pmd;

/**
 * A configuration value that cannot be used, named precisely enough to fix it without reading code.
 * <p>
 * The message always has the same shape, so a CLI can print it as it is:
 * <pre>
 *   [source: ]key = value: what is allowed[ (fix: suggestion)]
 *   e.g. my-nic.toml: port[0].rx_descriptors = 1000: must be a power of two between 64 and 32768 (fix: use 1024)
 * </pre>
 * {@link #key()} is the full path inside the file ({@code eal.memory_mb}, {@code port[1].args.iface}),
 * {@link #value()} the offending value written as TOML ({@code "veth0"}, {@code 1000}, {@code (missing)}),
 * and {@link #allowed()} a phrase that says what would have been accepted.
 */
public final class ConfigException extends RuntimeException
{
    /** Written in place of a value when a required key is absent. */
    public static final String MISSING = "(missing)";

    private final String source;
    private final String key;
    private final String value;
    private final String allowed;
    private final String fix;

    /**
     * @param key     full key path, e.g. {@code port[1].rx_queues}.
     * @param value   the offending value written as a TOML literal, or {@link #MISSING}.
     * @param allowed what is allowed, as a phrase starting with a verb, e.g. "must be between 1 and 64".
     * @param fix     a concrete suggestion, or an empty string when there is none worth giving.
     */
    public ConfigException(final String key, final String value, final String allowed, final String fix)
    {
        this("", key, value, allowed, fix);
    }

    /**
     * A failure with no concrete suggestion.
     *
     * @param key     full key path.
     * @param value   the offending value written as a TOML literal, or {@link #MISSING}.
     * @param allowed what is allowed.
     */
    public ConfigException(final String key, final String value, final String allowed)
    {
        this("", key, value, allowed, "");
    }

    private ConfigException(
        final String source, final String key, final String value, final String allowed, final String fix)
    {
        super(message(source, key, value, allowed, fix));
        this.source = source;
        this.key = key;
        this.value = value;
        this.allowed = allowed;
        this.fix = fix;
    }

    /**
     * The same failure, attributed to a file or preset. The source is added once: rules deep in the
     * model do not know where the configuration came from, the loader does.
     *
     * @param source a file path or {@code "preset net_null"}.
     * @return this failure with its source set, or this failure when it already has one.
     */
    public ConfigException withSource(final String source)
    {
        if (!this.source.isEmpty() || source == null || source.isEmpty())
        {
            return this;
        }

        final ConfigException attributed = new ConfigException(source, key, value, allowed, fix);
        attributed.setStackTrace(getStackTrace());
        return attributed;
    }

    /**
     * @return the file or preset the value came from, or an empty string when not known.
     */
    public String source()
    {
        return source;
    }

    /**
     * @return the full key path, e.g. {@code port[1].rx_queues}.
     */
    public String key()
    {
        return key;
    }

    /**
     * @return the offending value as a TOML literal, or {@link #MISSING}.
     */
    public String value()
    {
        return value;
    }

    /**
     * @return what would have been accepted, e.g. "must be an integer between 1 and 64".
     */
    public String allowed()
    {
        return allowed;
    }

    /**
     * @return a concrete suggestion such as "use 1024", or an empty string.
     */
    public String fix()
    {
        return fix;
    }

    private static String message(
        final String source, final String key, final String value, final String allowed, final String fix)
    {
        final StringBuilder sb = new StringBuilder(128);
        if (!source.isEmpty())
        {
            sb.append(source).append(": ");
        }
        sb.append(key).append(" = ").append(value).append(": ").append(allowed);
        if (!fix.isEmpty())
        {
            sb.append(" (fix: ").append(fix).append(')');
        }

        return sb.toString();
    }
}
