// Package localpath is skiff's built-in local-path provisioner
// ("skiff-local-path-provisioner", as k3s ships Rancher's): claims of a
// StorageClass whose provisioner is "skiff.io/local-path" get a hostPath
// PersistentVolume on the node their first pod runs on.
//
// It is an external provisioner in upstream's sense: the PV binder
// (persistentvolume-binder-controller) hands it a claim by annotating the
// claim volume.kubernetes.io/storage-provisioner: skiff.io/local-path (or
// the beta annotation); it creates the volume pre-bound to the claim and
// the binder binds them. What it does:
//
//   - At start, the StorageClass "local-path" (provisioner skiff.io/local-path,
//     volumeBindingMode WaitForFirstConsumer, reclaimPolicy Delete) is
//     created if it does not exist, marked default
//     (storageclass.kubernetes.io/is-default-class) unless another class
//     already is. A user who deletes it gets it back at the next start, as
//     k3s's manifests; to do without it, disable this controller
//     (--controllers=*,-skiff-local-path-provisioner). A changed class is
//     left as the user made it.
//   - A claim handed to it, with volume.kubernetes.io/selected-node (the
//     scheduler's choice for WaitForFirstConsumer): a PV "pvc-<claim UID>"
//     with hostPath <StorageDir>/pvc-<uid>_<namespace>_<name> (type
//     DirectoryOrCreate), node affinity kubernetes.io/hostname In [node]
//     (the Node's hostname label, else its name), the claim's size, access
//     modes and volumeMode (Filesystem only), the class's reclaim policy
//     and mount options, annotated pv.kubernetes.io/provisioned-by. Events
//     Provisioning and ProvisioningSucceeded (or ProvisioningFailed) on the
//     claim, as upstream's external provisioner library.
//   - skiff has no scheduler yet: for a WaitForFirstConsumer claim of its
//     class without a selected node, a pod using the claim that already
//     names a node (spec.nodeName) stands for the scheduler's decision:
//     the claim is annotated volume.kubernetes.io/selected-node with that
//     node, as the scheduler's VolumeBinding plugin would have done.
//   - A Released volume it provisioned with reclaim policy Delete (also
//     one the user is already deleting, held by pv-protection): its
//     directory is removed (ManageDirectories only), then the PV object.
//
// The directory: the kubelet would create it when mounting the hostPath
// (DirectoryOrCreate) and skiff has no kubelet yet. With
// ManageDirectories (skiff up: one process, one host, one node) this
// controller creates it at provisioning (mode 0777, as Rancher's) and
// removes it at deletion; otherwise (a standalone controller manager on
// another host) it never touches the file system and a deleted volume's
// directory stays on its node.
//
// Invariants:
//   - Only claims whose class names this provisioner and that the binder
//     handed over are provisioned; only volumes annotated
//     provisioned-by this provisioner are deleted.
//   - The PV name is a function of the claim's UID: provisioning twice
//     finds the volume already there (AlreadyExists is success).
//   - Nothing outside StorageDir is ever removed, and only a directory
//     whose name is the volume's own.
//   - The syncs (syncClaim, syncVolume) are functions of the listers'
//     state; tests call them directly.
package localpath
