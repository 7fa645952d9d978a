"""Record-level access: ACL entries that grant one record to another agent or tenant."""
