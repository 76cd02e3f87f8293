"""What-if searches built on simulation: nodes to add (plan), nodes that can go, configurations to choose."""
