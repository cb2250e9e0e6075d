// The Thrust Belady planner on host threads: kernels/belady_thrust.inl compiled by the
// host compiler with Thrust's TBB device system (Debian libthrust-dev). Thrust is wrapped
// in a namespace of its own (seer_thrust_host::thrust) so that these instantiations can
// never collide with another Thrust configuration in the same program (the CUDA backend,
// or a user's Thrust).
#if defined(THRUST_DEVICE_SYSTEM) || defined(THRUST_CUB_WRAPPED_NAMESPACE)
#error "kernels/belady_thrust_host.cc configures Thrust itself"
#endif
#define THRUST_DEVICE_SYSTEM THRUST_DEVICE_SYSTEM_TBB
#define THRUST_CUB_WRAPPED_NAMESPACE seer_thrust_host
#define SEER_THRUST_BACKEND thrust_host
#include "kernels/belady_thrust.inl"

namespace seer::kernels {

GpuPlanCode PlanBeladyThrustHost(const BeladyGpuInput& input, BeladyGpuOutput* output,
                                 std::string* error_message) {
  return thrust_host::PlanCatching(error_message, "host Thrust planner: out of memory: ", "host Thrust planner: ",
                                   [&](std::string* error) { return thrust_host::PlanBeladyThrust(input, output, error); });
}

}  // namespace seer::kernels
