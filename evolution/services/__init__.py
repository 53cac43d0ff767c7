"""The platform's and BenchEvolver's services (writes): campaigns, steps, leases, runner."""
