"""A workload from a service profile: launch, preview (`?dryRun=true`), upgrades. Their API routes are in
workloads.api (launch, upgrades), their pages in workloads.launch_views and workloads.upgrade_views. Reads profiles
through profiles' selectors; profiles never imports this."""
