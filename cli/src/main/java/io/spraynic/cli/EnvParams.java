package io.spraynic.cli;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * {@code --param-from-env NAME=VAR}: a config parameter filled from an environment variable that only the pod's
 * runtime knows, above all the PCI address of the VF the SR-IOV network device plugin allocated, which it hands the
 * container as {@code PCIDEVICE_<RESOURCE>} (e.g. {@code PCIDEVICE_INTEL_COM_SPRAYNIC_PLANE0} for
 * {@code intel.com/spraynic_plane0}) and which Kubernetes' {@code $(VAR)} expansion of args cannot reach.
 */
final class EnvParams
{
    /** The prefix of the device plugin's variables: each holds the PCI addresses of one resource, comma-separated. */
    static final String DEVICE_PLUGIN_PREFIX = "PCIDEVICE_";

    private EnvParams()
    {
    }

    /**
     * @param fromEnv parameter name to variable name.
     * @param params  the parameters given with -p, not changed.
     * @param env     the environment (System::getenv).
     * @return {@code params} and every parameter of {@code fromEnv} with its variable's value.
     * @throws BadOption for a variable unset or blank, a parameter also given with -p, or a device plugin variable
     *                   that lists several devices (a plane takes one VF).
     */
    static Map<String, String> resolve(final Map<String, String> fromEnv, final Map<String, String> params,
        final UnaryOperator<String> env)
    {
        final Map<String, String> resolved = new LinkedHashMap<>(params);
        for (final Map.Entry<String, String> entry : fromEnv.entrySet())
        {
            final String option = entry.getKey() + "=" + entry.getValue();
            if (params.containsKey(entry.getKey()))
            {
                throw new BadOption("--param-from-env", option, "parameter " + entry.getKey() + " is also given with -p",
                    "try --param-from-env " + option + " alone");
            }
            final String value = env.apply(entry.getValue());
            if (null == value || value.isBlank())
            {
                throw new BadOption("--param-from-env", option, "environment variable " + entry.getValue() + " is not set" +
                    (entry.getValue().startsWith(DEVICE_PLUGIN_PREFIX) ? " (the device plugin sets it only in a container " +
                    "whose limits ask for its resource)" : ""), "try --param-from-env " + entry.getKey() + "=VAR with a variable that " +
                    "is set, or -p " + entry.getKey() + "=VALUE");
            }
            if (entry.getValue().startsWith(DEVICE_PLUGIN_PREFIX) && value.indexOf(',') >= 0)
            {
                throw new BadOption("--param-from-env", option, entry.getValue() + " lists several devices (" + value +
                    "): the container was given more than one VF of the resource", "try --param-from-env " + option +
                    " in a container whose limits ask for 1");
            }
            resolved.put(entry.getKey(), value.strip());
        }
        return resolved;
    }
}
