// Every command line the operator runs in a pod (src/weka), one of each kind: what the chart's exec
// policy must admit. The unit test checks the policy's rules against them, the integration test
// has the apiserver admit them.
import {
  clusterCreateCall,
  clusterNameCall,
  containerDeactivateCall,
  containerIdentityCall,
  containerListCall,
  containerRemoveCall,
  containerStatusCall,
  driveAddCall,
  driveDeactivateCall,
  driveListCall,
  driveShowCall,
  driveRemoveCall,
  listBlockDevicesCall,
  listDrivesCall,
  SIGN_FLAGS,
  signExclusiveCall,
  signProxyCall,
  virtualAddCall,
  joinCalls,
  virtualRemoveCall,
  wholeDriveAddCall,
} from '../../src/weka/index.js';

export function operatorCommands(o: {
  device: string;
  uuid: string;
  guid: string;
  containerId: number;
  sizeGiB: number;
}): Array<readonly string[]> {
  const { device, uuid, guid, containerId } = o;
  return [
    listDrivesCall().argv,
    signProxyCall(device).argv,
    signProxyCall(device, [...SIGN_FLAGS]).argv,
    signExclusiveCall(device).argv,
    // Each flag first once: the policy checks the executable and its first argument.
    ...SIGN_FLAGS.map((flag) => signExclusiveCall(device, [flag]).argv),
    listBlockDevicesCall().argv,
    virtualAddCall({ physicalUUID: uuid, virtualUUID: uuid, ownerClusterGUID: guid, sizeGiB: o.sizeGiB }).argv,
    virtualRemoveCall({ physicalUUID: uuid, virtualUUID: uuid }).argv,
    containerIdentityCall('ns_drive', 35300).argv,
    clusterCreateCall([{ ip: '10.244.0.5', port: 35000 }]).argv,
    clusterNameCall('tenant').argv,
    ...joinCalls([{ ip: '10.244.0.5', port: 35000 }]).map((call) => call.argv),
    containerListCall().argv,
    containerStatusCall(containerId).argv,
    containerDeactivateCall(containerId).argv,
    containerRemoveCall(containerId, { noUnimprint: true }).argv,
    driveAddCall({ containerId, virtualUUID: uuid, type: 'TLC' }).argv,
    wholeDriveAddCall({ containerId, devicePath: device }).argv,
    driveListCall(containerId).argv,
    driveShowCall(uuid).argv,
    driveDeactivateCall(uuid).argv,
    driveRemoveCall(uuid).argv,
  ];
}
